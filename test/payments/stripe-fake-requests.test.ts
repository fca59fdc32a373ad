/**
 * How the fake Stripe checks and records requests, against the API reference ("Authentication",
 * "Versioning", "Errors") and the SDK's own encoding: a secret key as Bearer auth, the expected
 * Stripe-Version, form bodies in bracket syntax, unknown and missing parameters, unknown URLs.
 */
import { describe, expect, it } from "@effect/vitest"
import Stripe from "stripe"
import { payWith, rejection, sdk, useFake } from "./stripe-fake-fixtures.ts"

const fake = useFake()

describe("fake Stripe: requests", () => {
  it("a wrong or missing secret key is 401 (StripeAuthenticationError)", async () => {
    const wrong = await rejection(
      new Stripe("sk_test_wrong_key_1234", { ...fake().clientConfig() }).paymentIntents.retrieve("pi_x")
    )
    expect(wrong).toBeInstanceOf(Stripe.errors.StripeAuthenticationError)
    expect(wrong.statusCode).toBe(401)
    expect(wrong.message).toMatch(/^Invalid API Key provided: sk_test_\**1234$/)
    const none = await fetch(`${fake().url}/v1/payment_intents/pi_x`, {
      headers: { "stripe-version": fake().apiVersion }
    })
    expect(none.status).toBe(401)
    expect(await none.json()).toMatchObject({
      error: { type: "invalid_request_error", message: /did not provide an API key/ }
    })
  })

  it("a Stripe-Version other than the expected one, or none, is 400 invalid_request_error", async () => {
    const before = fake().paymentIntents().length
    const old = await rejection(
      sdk(fake(), { apiVersion: "2024-06-20" as any }).paymentIntents.create({ amount: 1000, currency: "usd" })
    )
    expect(old).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(old.message).toContain("2024-06-20")
    const none = await fetch(`${fake().url}/v1/payment_intents/pi_x`, {
      headers: { authorization: `Bearer ${fake().secretKey}` }
    })
    expect(none.status).toBe(400)
    expect(fake().paymentIntents().length).toBe(before)
  })

  it("unknown parameters are parameter_unknown with param, missing ones parameter_missing", async () => {
    const stripe = sdk(fake())
    const unknown = await rejection(
      stripe.paymentIntents.create({ amount: 1000, currency: "usd", colour: "red" } as any)
    )
    expect(unknown).toMatchObject({
      code: "parameter_unknown",
      param: "colour",
      message: "Received unknown parameter: colour"
    })
    const nested = await rejection(stripe.paymentIntents.create({
      amount: 1000,
      currency: "usd",
      payment_method_data: { type: "card", shared_payment_granted_token: "spt_x", extra: "1" } as any
    }))
    expect(nested).toMatchObject({ code: "parameter_unknown", param: "payment_method_data[extra]" })
    const missing = await rejection(stripe.paymentIntents.create({ currency: "usd" } as any))
    expect(missing).toMatchObject({
      code: "parameter_missing",
      param: "amount",
      message: "Missing required param: amount."
    })
    const notInteger = await rejection(stripe.paymentIntents.create({ amount: "ten" as any, currency: "usd" }))
    expect(notInteger).toMatchObject({ code: "parameter_invalid_integer", param: "amount" })
    const expand = await rejection(
      stripe.paymentIntents.create({ amount: 1000, currency: "usd", expand: ["customer"] })
    )
    expect(expand).toMatchObject({ param: "expand" })
  })

  it("records every request: method, path, decoded bracket params, and the SDK's headers", async () => {
    const stripe = sdk(fake())
    const token = fake().grantToken()
    await stripe.paymentIntents.create(payWith(token.id, 4200, { expand: ["latest_charge"], description: "Order 42" }))
    const request = fake().requests({ method: "POST", path: "/v1/payment_intents" }).at(-1)!
    expect(request.params).toEqual({
      amount: "4200",
      currency: "usd",
      confirm: "true",
      payment_method_data: { type: "card", shared_payment_granted_token: token.id },
      metadata: { checkout_session_id: "cs_test_1" },
      expand: ["latest_charge"],
      description: "Order 42"
    })
    expect(request.headers).toMatchObject({
      authorization: `Bearer ${fake().secretKey}`,
      "stripe-version": "2026-10-28.endive",
      "content-type": "application/x-www-form-urlencoded",
      "user-agent": expect.stringMatching(/^Stripe\/v1 NodeBindings\/23\.1\.0/)
    })
    // The SDK keys every POST itself.
    expect(request.idempotencyKey).toMatch(/^stripe-node-retry-/)
    expect(request.status).toBe(200)
  })

  it("reads `expand[]=` as well as the SDK's `expand[0]=`, and answers Stripe's headers", async () => {
    const body = new URLSearchParams({
      amount: "1000",
      currency: "usd",
      "expand[]": "latest_charge",
      "metadata[k]": "v"
    })
    const response = await fetch(`${fake().url}/v1/payment_intents`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${fake().secretKey}`,
        "stripe-version": fake().apiVersion,
        "content-type": "application/x-www-form-urlencoded",
        "idempotency-key": "raw-form-1"
      },
      body: body.toString()
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("request-id")).toMatch(/^req_/)
    expect(response.headers.get("idempotency-key")).toBe("raw-form-1")
    expect(response.headers.get("stripe-version")).toBe(fake().apiVersion)
    expect(await response.json()).toMatchObject({ metadata: { k: "v" }, latest_charge: null })
  })

  it("unknown URLs and ids are 404 invalid_request_error", async () => {
    const stripe = sdk(fake())
    const url = await rejection(stripe.rawRequest("GET", "/v1/unknown_things/x"))
    expect(url).toMatchObject({ statusCode: 404, message: expect.stringContaining("Unrecognized request URL") })
    const id = await rejection(stripe.paymentIntents.retrieve("pi_doesnotexist"))
    expect(id).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(id).toMatchObject({
      statusCode: 404,
      code: "resource_missing",
      message: "No such payment_intent: 'pi_doesnotexist'"
    })
  })
})
