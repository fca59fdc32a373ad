/**
 * Third-party 3-D Secure (API reference, PaymentIntents create and confirm,
 * `payment_method_options.card.three_d_secure`: the details of an authentication made with another
 * 3-D Secure provider, to use for the payment): `cryptogram`, `transaction_id` and `version` are
 * required, `electronic_commerce_indicator` and `ares_trans_status` are enums. Given at create or
 * confirm, they apply to the confirmation; a payment the issuer would challenge then goes through
 * when they report an authentication (`ares_trans_status` `Y` or `A`, or none given), and the
 * Charge shows them in `payment_method_details.card.three_d_secure`.
 *
 * Assumptions (the reference states the formats, not the errors): a cryptogram is 20 bytes in base64
 * (28 characters, as the reference describes it), a 3-D Secure 2 `transaction_id` is the directory
 * server's dsTransID, a UUID (EMV 3-D Secure), and a 1.0.2 one the XID, 20 bytes in base64; a bad
 * value is 400 `invalid_request_error` `parameter_invalid` at the parameter.
 */
import { invalidRequest } from "./errors.ts"
import { hash, oneOf, optional, required, string } from "./params.ts"

const VERSIONS = ["1.0.2", "2.1.0", "2.2.0", "2.3.0", "2.3.1"]

export const paymentMethodOptionsFields = hash({
  card: optional(hash({
    three_d_secure: optional(hash({
      cryptogram: required(string),
      transaction_id: required(string),
      version: required(oneOf(...VERSIONS)),
      electronic_commerce_indicator: optional(oneOf("01", "02", "05", "06", "07")),
      ares_trans_status: optional(oneOf("A", "C", "I", "N", "R", "U", "Y")),
      exemption_indicator: optional(oneOf("low_risk", "none")),
      requestor_challenge_indicator: optional(string)
    }))
  }))
})

export interface ThreeDSecure {
  readonly cryptogram: string
  readonly transaction_id: string
  readonly version: string
  readonly electronic_commerce_indicator?: string
  readonly ares_trans_status?: string
}

/** As a Charge shows it (`payment_method_details.card.three_d_secure`). */
export interface ChargeThreeDSecure {
  authentication_flow: null
  electronic_commerce_indicator: string | null
  result: "authenticated" | "attempt_acknowledged" | "failed"
  transaction_id: string
  version: string
}

const PARAM = "payment_method_options[card][three_d_secure]"
const BASE64_20_BYTES = /^[A-Za-z0-9+/]{27}=$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const invalid = (field: string, message: string) =>
  invalidRequest(message, { code: "parameter_invalid", param: `${PARAM}[${field}]` })

/** The validated parameters of a create or confirm, if it gave any. */
export const threeDSecureOf = (params: Record<string, any>): ThreeDSecure | undefined => {
  const given = params.payment_method_options?.card?.three_d_secure as ThreeDSecure | undefined
  if (given === undefined) return undefined
  if (!BASE64_20_BYTES.test(given.cryptogram)) {
    throw invalid("cryptogram", "Invalid cryptogram: expected 20 bytes, base64-encoded into a 28-character string.")
  }
  const xid = given.version === "1.0.2"
  if (xid ? !BASE64_20_BYTES.test(given.transaction_id) : !UUID.test(given.transaction_id)) {
    throw invalid(
      "transaction_id",
      xid
        ? "Invalid transaction_id: for 3D Secure 1 the XID, 20 bytes base64-encoded."
        : "Invalid transaction_id: for 3D Secure 2 the Directory Server Transaction ID (dsTransID), a UUID."
    )
  }
  return given
}

/** Whether the details report an authentication the issuer accepts in place of its challenge. */
export const authenticates = (details: ThreeDSecure): boolean =>
  details.ares_trans_status === undefined || details.ares_trans_status === "Y" || details.ares_trans_status === "A"

export const chargeThreeDSecure = (details: ThreeDSecure): ChargeThreeDSecure => ({
  authentication_flow: null,
  electronic_commerce_indicator: details.electronic_commerce_indicator ?? null,
  result: details.ares_trans_status === "A"
    ? "attempt_acknowledged"
    : authenticates(details)
    ? "authenticated"
    : "failed",
  transaction_id: details.transaction_id,
  version: details.version
})
