/**
 * The fake Stripe's idempotent requests against the API reference ("Idempotent requests", and the
 * 409 of "Errors"): a retry with the same key gets the first answer again, other parameters or
 * another endpoint fail, a key still running is a conflict, failed validation saves nothing, keys
 * expire after 24 hours and belong to one account (secret key).
 */
import { describe, expect, it } from "@effect/vitest"
import Stripe from "stripe"
import { ManualClock } from "../support/stripe/clock.ts"
import { payWith, rejection, sdk, until, useFake } from "./stripe-fake-fixtures.ts"

const fake = useFake({ otherSecretKeys: ["sk_test_second_account"] })
const clock = new ManualClock(Date.UTC(2026, 10, 1))
const timed = useFake({ clock })

let counter = 0
const key = () => `idem-${Date.now()}-${++counter}`

describe("fake Stripe: idempotent requests", () => {
  it("the same key and parameters answer the first response again, with Idempotent-Replayed", async () => {
    const stripe = sdk(fake())
    const params = payWith(fake().grantToken().id, 2100)
    const k = key()
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: k })
    const second = await stripe.paymentIntents.create(params, { idempotencyKey: k })
    expect(second.id).toBe(first.id)
    expect(second).toEqual(first)
    expect(second.lastResponse.headers["idempotent-replayed"]).toBe("true")
    expect(second.lastResponse.headers["original-request"]).toBe(first.lastResponse.requestId)
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined()
    expect(fake().paymentIntents().filter((pi) => pi.id === first.id)).toHaveLength(1)
    expect(fake().requests().filter((r) => r.idempotencyKey === k).map((r) => r.replayed)).toEqual([false, true])
  })

  it("a replay of a decline is the same 402, without a second attempt", async () => {
    const stripe = sdk(fake())
    const params = payWith(fake().grantToken({ behavior: "declines", declineCode: "insufficient_funds" }).id, 1300)
    const k = key()
    const first = await rejection(stripe.paymentIntents.create(params, { idempotencyKey: k }))
    const again = await rejection(stripe.paymentIntents.create(params, { idempotencyKey: k }))
    expect(again).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect(again.payment_intent.id).toBe(first.payment_intent.id)
    expect(fake().charges().filter((c) => c.payment_intent === first.payment_intent.id)).toHaveLength(1)
  })

  it("the same key with other parameters, or on another endpoint, is StripeIdempotencyError", async () => {
    const stripe = sdk(fake())
    const k = key()
    await stripe.paymentIntents.create({ amount: 1000, currency: "usd" }, { idempotencyKey: k })
    const other = await rejection(
      stripe.paymentIntents.create({ amount: 1001, currency: "usd" }, { idempotencyKey: k })
    )
    expect(other).toBeInstanceOf(Stripe.errors.StripeIdempotencyError)
    expect(other).toMatchObject({ statusCode: 400, rawType: "idempotency_error" })
    expect(other.message).toContain("same parameters")
    const elsewhere = await rejection(stripe.refunds.create({ payment_intent: "pi_x" }, { idempotencyKey: k }))
    expect(elsewhere).toBeInstanceOf(Stripe.errors.StripeIdempotencyError)
    expect(elsewhere.message).toContain("same endpoint")
  })

  it("a second request while the first with its key still runs is 409; the SDK's retry then gets the replay", async () => {
    const stripe = sdk(fake())
    const params = payWith(fake().grantToken().id, 1700)
    const k = key()
    fake().fail({ path: "/v1/payment_intents", with: "delay", ms: 400 })
    const first = stripe.paymentIntents.create(params, { idempotencyKey: k })
    // Once the fake has the request, its key is claimed (the delay comes after the claim).
    await until(() => fake().requests().some((r) => r.idempotencyKey === k))
    const conflict = await rejection(stripe.paymentIntents.create(params, { idempotencyKey: k }))
    expect(conflict).toBeInstanceOf(Stripe.errors.StripeAPIError)
    expect(conflict).toMatchObject({ statusCode: 409, code: "idempotency_key_in_use" })

    fake().fail({ path: "/v1/payment_intents", with: "delay", ms: 300 })
    const k2 = key()
    const slow = stripe.paymentIntents.create(params, { idempotencyKey: k2 })
    await until(() => fake().requests().some((r) => r.idempotencyKey === k2))
    // The SDK retries a 409 (after its 0.5 s backoff), by then the first has finished.
    const retried = await sdk(fake(), { maxNetworkRetries: 1 }).paymentIntents.create(params, { idempotencyKey: k2 })
    expect(retried.id).toBe((await slow).id)
    expect((await first).status).toBe("succeeded")
  })

  it("a request refused by validation saves nothing under its key", async () => {
    const stripe = sdk(fake())
    const k = key()
    const invalid = await rejection(
      stripe.paymentIntents.create({ amount: 1000, currency: "usd", bogus: 1 } as any, { idempotencyKey: k })
    )
    expect(invalid.code).toBe("parameter_unknown")
    const valid = await stripe.paymentIntents.create({ amount: 1000, currency: "usd" }, { idempotencyKey: k })
    expect(valid.lastResponse.headers["idempotent-replayed"]).toBeUndefined()
  })

  it("keys belong to the secret key they were used with", async () => {
    const params = { amount: 1000, currency: "usd" }
    const k = key()
    const one = await sdk(fake()).paymentIntents.create(params, { idempotencyKey: k })
    const other = new Stripe("sk_test_second_account", { ...fake().clientConfig(), maxNetworkRetries: 0 })
    const two = await other.paymentIntents.create(params, { idempotencyKey: k })
    expect(two.id).not.toBe(one.id)
  })

  it("a key at least 24 hours old is pruned: reusing it makes a new request", async () => {
    const stripe = sdk(timed())
    const params = { amount: 1000, currency: "usd" }
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: "day-old" })
    clock.advance(24 * 60 * 60 * 1000 - 1)
    expect((await stripe.paymentIntents.create(params, { idempotencyKey: "day-old" })).id).toBe(first.id)
    clock.advance(1)
    expect((await stripe.paymentIntents.create(params, { idempotencyKey: "day-old" })).id).not.toBe(first.id)
  })
})
