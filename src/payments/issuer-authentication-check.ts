/** The built-in processor's side of 3-D Secure; how a result is bound to its payment: `docs/three-d-secure.md`. */
import { Either } from "effect"
import {
  type AuthenticationSession,
  scenarioOf,
  THREE_DS_VERSION
} from "../delegate-authentication/model/authentication-session.ts"
import type { AuthenticationRequest, AuthenticationResult, DirectoryServer } from "./model/issuer-authentication.ts"

export const needsAuthentication = (cardNumber: string): boolean => scenarioOf(cardNumber) !== "not_enrolled"

const DIRECTORY_SERVERS: Readonly<Record<string, DirectoryServer>> = {
  visa: "visa",
  mastercard: "mastercard",
  amex: "american_express"
}

export const directoryServerOf = (brand: string): DirectoryServer | undefined => DIRECTORY_SERVERS[brand]

export const TEST_ACQUIRER = { bin: "400000", country: "US" } as const

/** The merchant by its id, cut to the wire's limits; frictionless preferred (issuers decide). */
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

export interface AuthenticatedPayment {
  readonly checkoutSessionId: string
  readonly amount: number
  readonly currency: string
  readonly merchantId: string
  readonly cardFingerprint: string
}

const statusOf = { authenticated: "authenticated", attempt_acknowledged: "attempted" } as const

/** Why the provider's session (as it shows now) cannot back `presented`; spending it is the caller's step. */
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
