/**
 * The payment side of completing a checkout, in the three steps the checkout service runs so that
 * a checkout is charged exactly once (`docs/concurrency.md`):
 *
 * 1. `authorize`, inside the transaction that records the payment attempt: checks that the
 *    credential may pay for this session (for a `vt_` token: its allowance) and holds it for this
 *    session, so no other session can spend it meanwhile; a card that needs issuer authentication
 *    (3-D Secure) is refused until the request presents a result the provider confirms was made
 *    for this session, amount, currency, merchant and card, and that result is spent;
 * 2. `charge`, outside any transaction: the charge itself, keyed by the attempt's idempotency key —
 *    calling it again with the same key returns the first result, never a second charge;
 * 3. `release`, when the charge was declined, inside the transaction that records the decline:
 *    gives the credential back. A successful charge needs no third step: the credential stays
 *    held by the session it paid for.
 *
 * `settleCharge` says what a key's charge came to without charging, and closes a key under which
 * none was made, so that none ever will be: how a payment whose request died (or stalled) after
 * step 1 is settled when no retry comes (`payment-settlement-service.ts`). A request still on its
 * way to the charge then finds the key closed, instead of charging for a session the settlement
 * made payable again.
 */
import { Context, Data, type Effect, type Either, type Option } from "effect"
import type { AuthenticationRequest, AuthenticationResult } from "../checkout/session-authentication.ts"
import type { StorageError } from "../db/storage-error.ts"

export type PaymentCredential =
  | {
    readonly kind: "handler"
    readonly handlerId: string
    readonly instrumentType: string
    readonly credentialType: string
    readonly token: string
  }
  | { readonly kind: "legacy"; readonly provider: string; readonly token: string }

/** JSONPath of the credential's token in the complete request. */
export const credentialParam = (credential: PaymentCredential): string =>
  credential.kind === "handler" ? "$.payment_data.instrument.credential.token" : "$.payment_data.token"

export interface ChargeRequest {
  readonly sessionId: string
  readonly amount: number
  readonly currency: string
  readonly credential: PaymentCredential
  /** The same for every retry of one payment attempt. */
  readonly idempotencyKey: string
  /** The issuer authentication the agent presents; the provider checks it before relying on it. */
  readonly authentication?: AuthenticationResult | undefined
}

export interface Charge {
  readonly id: string
  readonly amount: number
  readonly currency: string
}

/** The issuer or processor said no (→ 402 payment_declined; the session stays payable). */
export class PaymentDeclined extends Data.TaggedError("PaymentDeclined")<{
  readonly reason:
    | "card_declined"
    | "insufficient_funds"
    /** The agent's authentication result says the issuer did not authenticate the cardholder. */
    | "authentication_failed"
    /** The card needs issuer authentication and the request's version or agent cannot carry it out. */
    | "authentication_unavailable"
  readonly message: string
  /** JSONPath of what was declined in the complete request; the payment data when absent. */
  readonly param?: string
}> {}

/**
 * The card needs issuer authentication (3-D Secure) before it can be charged: what the agent
 * authenticates with. Nothing was held: the credential is free until the payment comes back.
 */
export class AuthenticationRequired extends Data.TaggedError("AuthenticationRequired")<{
  readonly request: AuthenticationRequest
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
  /** Whether the provider carries out 3-D Secure (asks for it, and charges with its result). */
  readonly threeDSecure: boolean
  readonly authorize: (
    request: ChargeRequest
  ) => Effect.Effect<void, PaymentRejected | AuthenticationRequired | StorageError>
  readonly charge: (request: ChargeRequest) => Effect.Effect<Charge, PaymentDeclined | PaymentRejected | StorageError>
  readonly release: (request: ChargeRequest) => Effect.Effect<void, StorageError>
  /**
   * The outcome of the charge made under the attempt's key; none if no charge was made under it,
   * and then none ever will be: a later `charge` under the key fails with `PaymentRejected`. Never
   * charges; atomic with a concurrent `charge` under the key (one of the two comes first).
   */
  readonly settleCharge: (
    attempt: { readonly idempotencyKey: string; readonly amount: number; readonly currency: string }
  ) => Effect.Effect<Option.Option<Either.Either<Charge, PaymentDeclined>>, StorageError>
}

export class PaymentProvider extends Context.Tag("acp/PaymentProvider")<PaymentProvider, PaymentProviderService>() {}

/** A non-secret reference to a credential, kept with the payment attempt. */
export const credentialRef = (credential: PaymentCredential): string =>
  /^(vt|tok)_[A-Za-z0-9_]{1,64}$/.test(credential.token) ? credential.token : "external_token"
