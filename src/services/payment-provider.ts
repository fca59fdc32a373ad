/**
 * The payment side of completing a checkout. The provider charges a credential for the session
 * total; a charge is keyed (`idempotencyKey`) so that a retried call never charges twice.
 */
import { Context, Data, Effect, Layer } from "effect"
import { randomId } from "./ids.ts"

export type PaymentCredential =
  | {
    readonly kind: "handler"
    readonly handlerId: string
    readonly instrumentType: string
    readonly credentialType: string
    readonly token: string
  }
  | { readonly kind: "legacy"; readonly provider: string; readonly token: string }

export interface ChargeRequest {
  readonly sessionId: string
  readonly amount: number
  readonly currency: string
  readonly credential: PaymentCredential
  /** Deterministic per session: the provider returns the first charge again for a repeated key. */
  readonly idempotencyKey: string
}

export interface Charge {
  readonly id: string
  readonly amount: number
  readonly currency: string
}

/** The issuer or processor said no (→ 402 payment_declined; the session stays payable). */
export class PaymentDeclined extends Data.TaggedError("PaymentDeclined")<{
  readonly reason: "card_declined" | "insufficient_funds"
  readonly message: string
}> {}

/**
 * The credential cannot pay for this session (unknown or used token, allowance exceeded, wrong
 * merchant/session/currency, expired): 422 with a MessageError on the session.
 */
export class PaymentRejected extends Data.TaggedError("PaymentRejected")<{
  readonly message: string
  /** JSONPath of the credential in the complete request. */
  readonly param: string
}> {}

export interface PaymentProviderService {
  readonly charge: (request: ChargeRequest) => Effect.Effect<Charge, PaymentDeclined | PaymentRejected>
}

export class PaymentProvider extends Context.Tag("acp/PaymentProvider")<PaymentProvider, PaymentProviderService>() {}

/**
 * Approves every charge, once per idempotency key. A stand-in processor for a merchant without a
 * payment service yet, and the default for tests that are not about payment.
 */
export const ApprovingPaymentProvider = Layer.sync(PaymentProvider, () => {
  const charges = new Map<string, Charge>()
  return {
    charge: (request) =>
      Effect.sync(() => {
        const existing = charges.get(request.idempotencyKey)
        if (existing) return existing
        const charge = { id: randomId("ch_"), amount: request.amount, currency: request.currency }
        charges.set(request.idempotencyKey, charge)
        return charge
      })
  }
})
