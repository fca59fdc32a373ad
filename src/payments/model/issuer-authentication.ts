/** 3-D Secure of a checkout in no version's format; versions without the flow never see a session require it. */
import { Schema } from "effect"
import { optional } from "../../shared/schema-helpers.ts"

export const DirectoryServer = Schema.Literal("american_express", "mastercard", "visa")
export type DirectoryServer = typeof DirectoryServer.Type

/** What the agent authenticates with, as the provider gave it; kept on an `authentication_required` session. */
export const AuthenticationRequest = Schema.Struct({
  acquirer_details: Schema.Struct({
    acquirer_bin: Schema.String,
    acquirer_country: Schema.String,
    acquirer_merchant_id: Schema.String,
    merchant_name: Schema.String,
    requestor_id: optional(Schema.String)
  }),
  directory_server: DirectoryServer,
  flow_preference: optional(Schema.Struct({
    type: Schema.Literal("challenge", "frictionless"),
    challenge: optional(Schema.Struct({ type: optional(Schema.Literal("mandated", "preferred")) })),
    frictionless: optional(Schema.Struct({ type: optional(Schema.Literal("low_risk")) }))
  }))
}).annotations({ identifier: "AuthenticationRequest" })
export type AuthenticationRequest = typeof AuthenticationRequest.Type

export const AUTHENTICATION_OUTCOMES = [
  "abandoned",
  "attempt_acknowledged",
  "authenticated",
  "canceled",
  "denied",
  "informational",
  "internal_error",
  "not_supported",
  "processing_error",
  "rejected"
] as const
export type AuthenticationOutcome = typeof AUTHENTICATION_OUTCOMES[number]

export const PAYING_OUTCOMES: ReadonlyArray<AuthenticationOutcome> = ["authenticated", "attempt_acknowledged"]

/** The outcomes whose result must carry its details (the protocol's rule). */
export const OUTCOMES_WITH_DETAILS: ReadonlyArray<AuthenticationOutcome> = [
  "authenticated",
  "attempt_acknowledged",
  "informational"
]

/** The outcome an agent reports for the issuer's 3DS2 `transStatus`. */
export const OUTCOME_OF_TRANS_STATUS: Readonly<Record<string, AuthenticationOutcome>> = {
  Y: "authenticated",
  A: "attempt_acknowledged",
  N: "denied",
  R: "rejected",
  U: "abandoned"
}

export interface AuthenticationResult {
  readonly outcome: AuthenticationOutcome
  readonly outcome_details?: {
    readonly three_ds_cryptogram: string
    readonly electronic_commerce_indicator: string
    /** The directory server's transaction id (3DS2), by which the provider finds the authentication. */
    readonly transaction_id: string
    readonly version: string
  }
}

export const isPayingOutcome = (result: AuthenticationResult): boolean => PAYING_OUTCOMES.includes(result.outcome)

export const notAuthenticatedReason = (result: AuthenticationResult): string =>
  `The card issuer did not authenticate the payment (${
    result.outcome.replaceAll("_", " ")
  }); nothing was charged. Pay with another card, or authenticate again.`
