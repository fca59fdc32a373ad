/**
 * The built-in processor's side of 3-D Secure: which cards need issuer authentication before a
 * charge, what the agent authenticates with, and whether a result the agent presents may pay.
 *
 * The protocol leaves open how a result is bound to a payment. Here it is bound through the
 * authentication provider that made it (the Delegate Authentication API's sessions, in the same
 * database): the result pays only if that provider confirms it authenticated this checkout
 * session, this amount and currency, this merchant and this card (the vault's keyed fingerprint),
 * that it has not expired, and that its cryptogram and ECI are the ones presented. The caller then
 * spends it (`markUsed`), so one result pays at most one checkout.
 */
import { Either } from "effect"
import {
  type AuthenticationSession,
  scenarioOf,
  THREE_DS_VERSION
} from "../delegate-authentication/model/authentication-session.ts"
import type { AuthenticationRequest, AuthenticationResult, DirectoryServer } from "./model/issuer-authentication.ts"

/** Cards the simulated issuers enroll in 3-D Secure need it to be charged (`docs/three-d-secure.md`). */
export const needsAuthentication = (cardNumber: string): boolean => scenarioOf(cardNumber) !== "not_enrolled"

const DIRECTORY_SERVERS: Readonly<Record<string, DirectoryServer>> = {
  visa: "visa",
  mastercard: "mastercard",
  amex: "american_express"
}

export const directoryServerOf = (brand: string): DirectoryServer | undefined => DIRECTORY_SERVERS[brand]

/** The test acquirer's BIN and country: the built-in processor acquires for every merchant it serves. */
export const TEST_ACQUIRER = { bin: "400000", country: "US" } as const

/**
 * What the agent authenticates with: the test acquirer, the merchant as the acquirer knows it (by
 * its id, at most 40 characters), the card's directory server, and a frictionless preference
 * (issuers decide; the challenge card is challenged anyway).
 */
export const authenticationRequestFor = (
  directoryServer: DirectoryServer,
  merchantId: string
): AuthenticationRequest => ({
  acquirer_details: {
    acquirer_bin: TEST_ACQUIRER.bin,
    acquirer_country: TEST_ACQUIRER.country,
    acquirer_merchant_id: merchantId.slice(0, 35),
    merchant_name: merchantId.slice(0, 40)
  },
  directory_server: directoryServer,
  flow_preference: { type: "frictionless", frictionless: { type: "low_risk" } }
})

/** The payment a presented result must have been made for. */
export interface AuthenticatedPayment {
  readonly checkoutSessionId: string
  readonly amount: number
  readonly currency: string
  readonly merchantId: string
  readonly cardFingerprint: string
}

const statusOf = { authenticated: "authenticated", attempt_acknowledged: "attempted" } as const

/**
 * Why `authentication` (the provider's session, as it shows now) cannot back `presented` for
 * `payment`, or nothing when it can. Spending it is the caller's step.
 */
export const refuseAuthentication = (
  authentication: AuthenticationSession,
  presented: AuthenticationResult,
  payment: AuthenticatedPayment
): Either.Either<void, string> => {
  const details = presented.outcome_details
  const expected = statusOf[presented.outcome as keyof typeof statusOf]
  if (authentication.status === "expired") {
    return Either.left("The authentication has expired; authenticate the card again.")
  }
  if (expected === undefined || authentication.status !== expected) {
    return Either.left(`The authentication provider did not report this authentication as ${presented.outcome}.`)
  }
  const result = authentication.result
  if (
    details === undefined || result?.cryptogram !== details.three_ds_cryptogram ||
    result.eci !== details.electronic_commerce_indicator || details.version !== THREE_DS_VERSION
  ) {
    return Either.left("The cryptogram, ECI or version differ from the authentication the provider made.")
  }
  if (authentication.checkoutSessionId !== payment.checkoutSessionId) {
    return Either.left("The authentication was not made for this checkout session.")
  }
  if (authentication.merchantId !== payment.merchantId) {
    return Either.left("The authentication was not made for this merchant.")
  }
  if (
    authentication.amount !== payment.amount ||
    authentication.currency.toLowerCase() !== payment.currency.toLowerCase()
  ) {
    return Either.left("The authentication was made for another amount; authenticate the session's total.")
  }
  if (authentication.card.fingerprint !== payment.cardFingerprint) {
    return Either.left("The authentication was made for another card.")
  }
  return Either.void
}
