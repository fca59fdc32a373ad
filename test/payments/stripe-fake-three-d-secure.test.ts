/**
 * The fake Stripe's third-party 3-D Secure (`payment_method_options[card][three_d_secure]`), driven
 * by the real `stripe` SDK: a token whose issuer asks for authentication pays when confirmed with an
 * authentication, at confirm or given at creation; the Charge shows it; missing or malformed fields
 * are refused at their parameter, before anything changes.
 */
import { describe, expect, it } from "@effect/vitest"
import { randomBytes, randomUUID } from "node:crypto"
import Stripe from "stripe"
import { rejection, sdk, useFake, withToken } from "./stripe-fake-fixtures.ts"

const fake = useFake()

type ThreeDSecure = Stripe.PaymentIntentConfirmParams.PaymentMethodOptions.Card.ThreeDSecure

const authenticated = (over: Partial<ThreeDSecure> = {}): ThreeDSecure => ({
  cryptogram: randomBytes(20).toString("base64"),
  transaction_id: randomUUID(),
  version: "2.2.0",
  electronic_commerce_indicator: "05",
  ares_trans_status: "Y",
  ...over
})

const options = (threeDSecure: ThreeDSecure) => ({ payment_method_options: { card: { three_d_secure: threeDSecure } } })

const created = (stripe: Stripe, token: string, extra: Partial<Stripe.PaymentIntentCreateParams> = {}) =>
  stripe.paymentIntents.create({ amount: 1500, currency: "usd", payment_method_data: withToken(token), ...extra })

describe("fake Stripe: third-party 3-D Secure", () => {
  it("a token that asks for it: requires_action without, succeeded with an authentication at confirm", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "requires_action" }).id
    const plain = await stripe.paymentIntents.confirm((await created(stripe, token)).id)
    expect(plain.status).toBe("requires_action")
    const details = authenticated()
    const paid = await stripe.paymentIntents.confirm((await created(stripe, token)).id, {
      ...options(details),
      expand: ["latest_charge"]
    })
    expect(paid.status).toBe("succeeded")
    expect((paid.latest_charge as any).payment_method_details.card).toMatchObject({
      brand: "visa",
      three_d_secure: {
        result: "authenticated",
        version: "2.2.0",
        electronic_commerce_indicator: "05",
        transaction_id: details.transaction_id
      }
    })
  })

  it("given at creation, it applies to the later confirmation; ares_trans_status A is attempt_acknowledged", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "requires_action" }).id
    const intent = await created(stripe, token, options(authenticated({ ares_trans_status: "A" })))
    const paid = await stripe.paymentIntents.confirm(intent.id, { expand: ["latest_charge"] })
    expect(paid.status).toBe("succeeded")
    expect((paid.latest_charge as any).payment_method_details.card.three_d_secure.result).toBe(
      "attempt_acknowledged"
    )
  })

  it("an authentication the issuer did not accept (ares_trans_status N): still requires_action", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "requires_action" }).id
    const intent = await created(stripe, token)
    const confirmed = await stripe.paymentIntents.confirm(intent.id, options(authenticated({ ares_trans_status: "N" })))
    expect(confirmed.status).toBe("requires_action")
  })

  it("missing or malformed fields: 400 invalid_request_error at the parameter, the PaymentIntent unchanged", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken({ behavior: "requires_action" }).id
    const intent = await created(stripe, token)
    const param = (field: string) => `payment_method_options[card][three_d_secure][${field}]`
    const { cryptogram: _cryptogram, ...noCryptogram } = authenticated()
    const cases: ReadonlyArray<readonly [unknown, string, string]> = [
      [noCryptogram, param("cryptogram"), "parameter_missing"],
      [authenticated({ cryptogram: "ABCDEFGHIJKLMNOPQRSTUVWX==" }), param("cryptogram"), "parameter_invalid"],
      [authenticated({ transaction_id: "dsTransId_12345" }), param("transaction_id"), "parameter_invalid"],
      [authenticated({ version: "3.0.0" }), param("version"), ""],
      [authenticated({ electronic_commerce_indicator: "09" }), param("electronic_commerce_indicator"), ""],
      [authenticated({ ares_trans_status: "Q" }), param("ares_trans_status"), ""]
    ]
    for (const [threeDSecure, at, code] of cases) {
      const error = await rejection(stripe.paymentIntents.confirm(intent.id, options(threeDSecure as ThreeDSecure)))
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
      expect(error.param).toBe(at)
      if (code !== "") expect(error.code).toBe(code)
    }
    expect(fake().paymentIntent(intent.id).status).toBe("requires_confirmation")
    const refusedAtCreate = await rejection(
      created(stripe, token, options(authenticated({ cryptogram: "short" })))
    )
    expect(refusedAtCreate.param).toBe(param("cryptogram"))
  })
})
