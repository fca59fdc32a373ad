/** What a payment is, whoever carries it out: the credential, the charge asked and made, and how a payment fails. */
import { Data } from "effect"
import type { AuthenticationRequest, AuthenticationResult } from "./issuer-authentication.ts"

export type PaymentCredential =
  | {
    readonly kind: "handler"
    readonly handlerId: string
    /** The handler's payment service provider (the catalog's `psp`): who charges the credential. */
    readonly psp: string
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
    | "authentication_failed"
    /** The card needs issuer authentication and the request's version or agent cannot carry it out. */
    | "authentication_unavailable"
  readonly message: string
  /** The issuer's own reason when the provider names one (Stripe's `decline_code`), for the merchant's records. */
  readonly declineCode?: string
  /** JSONPath of what was declined in the complete request; the payment data when absent. */
  readonly param?: string
}> {}

/** The card needs 3-D Secure before a charge. Nothing is held: the credential is free until the payment comes back. */
export class AuthenticationRequired extends Data.TaggedError("AuthenticationRequired")<{
  readonly request: AuthenticationRequest
}> {}

/** The credential cannot pay for the session (unknown or used token, beyond its allowance): 422, a session message. */
export class PaymentRejected extends Data.TaggedError("PaymentRejected")<{
  readonly message: string
  readonly param: string
}> {}

/**
 * The provider has not decided (→ the attempt stays pending, nothing more is written): `processing`, the
 * payment goes on and the provider settles it later; `unavailable`, the provider could not be reached or
 * failed, and a retry under the same key gets the first request's outcome, never a second charge.
 */
export class PaymentPending extends Data.TaggedError("PaymentPending")<{
  readonly reason: "processing" | "unavailable"
  readonly retryAfterSeconds: number
}> {}

/**
 * A non-secret reference to a credential, kept with the payment attempt. A Stripe shared payment
 * token id (`spt_…`) is kept as it is: the settlement of a pending attempt pays with it again.
 */
export const credentialRef = (credential: PaymentCredential): string =>
  /^(vt|tok|spt)_[A-Za-z0-9_]{1,64}$/.test(credential.token) ? credential.token : "external_token"

/** What the settlement knows of a pending attempt: its key, and what it charged with. */
export interface PendingCharge {
  readonly sessionId: string
  readonly idempotencyKey: string
  readonly amount: number
  readonly currency: string
  readonly credentialRef: string
}

/** Provider names the built-in processor answers to in the legacy `{token, provider}` shape. */
export const BUILTIN_PROVIDER_ALIASES: ReadonlyArray<string> = ["stripe"]
