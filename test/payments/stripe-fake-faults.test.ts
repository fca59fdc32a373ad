/**
 * Faults the fake Stripe injects, and what the real SDK does with them: it retries 5xx and a 429
 * marked `Stripe-Should-Retry: true` with the same Idempotency-Key (so a retry never charges
 * twice), retries a closed connection once even with retries off, and reports a timeout; a retry
 * of a request whose answer was lost gets the saved answer (the work is done once).
 */
import { describe, expect, it } from "@effect/vitest"
import Stripe from "stripe"
import { payWith, rejection, sdk, useFake } from "./stripe-fake-fixtures.ts"

const fake = useFake()

const PATH = "/v1/payment_intents"
const attemptsOf = (key: string) => fake().requests({ path: PATH }).filter((r) => r.idempotencyKey === key)
const intentsFor = (session: string) =>
  fake().paymentIntents().filter((pi) => pi.metadata.checkout_session_id === session)

let counter = 0
const session = () => `cs_fault_${Date.now()}_${++counter}`

describe("fake Stripe: faults", () => {
  it("500, 500, then success: the SDK's own retries (maxNetworkRetries 2) keep one Idempotency-Key", async () => {
    const cs = session()
    fake().fail({ path: PATH, times: 2, with: "500" })
    const intent = await sdk(fake(), { maxNetworkRetries: 2 }).paymentIntents.create(
      payWith(fake().grantToken().id, 1000, { metadata: { checkout_session_id: cs } })
    )
    expect(intent.status).toBe("succeeded")
    const attempts = fake().requests({ path: PATH }).filter((r) =>
      r.params.metadata !== undefined && (r.params.metadata as any).checkout_session_id === cs
    )
    expect(attempts.map((r) => [r.fault, r.status])).toEqual([["500", 500], ["500", 500], [null, 200]])
    expect(new Set(attempts.map((r) => r.idempotencyKey)).size).toBe(1)
    expect(intentsFor(cs)).toHaveLength(1)
  })

  it("a 429 lock timeout is retried by the SDK; a plain rate limit is StripeRateLimitError", async () => {
    fake().fail({ path: PATH, with: "429" })
    const k = `lock-${session()}`
    const intent = await sdk(fake(), { maxNetworkRetries: 2 }).paymentIntents.create(
      { amount: 1000, currency: "usd" },
      { idempotencyKey: k }
    )
    expect(attemptsOf(k).map((r) => r.status)).toEqual([429, 200])
    expect(intent.status).toBe("requires_payment_method")

    fake().fail({ path: PATH, with: "rate_limit" })
    const limited = await rejection(sdk(fake()).paymentIntents.create({ amount: 1000, currency: "usd" }))
    expect(limited).toBeInstanceOf(Stripe.errors.StripeRateLimitError)
    expect(limited.code).toBe("rate_limit")
  })

  it("a 500 with retries off is StripeAPIError, and nothing was done", async () => {
    const cs = session()
    fake().fail({ path: PATH, with: "500" })
    const error = await rejection(
      sdk(fake()).paymentIntents.create(
        payWith(fake().grantToken().id, 1000, { metadata: { checkout_session_id: cs } })
      )
    )
    expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError)
    expect(error.statusCode).toBe(500)
    expect(intentsFor(cs)).toHaveLength(0)
  })

  it("timeout: the charge is made but the answer never comes; a retry with the key gets it", async () => {
    const cs = session()
    const k = `timeout-${cs}`
    const params = payWith(fake().grantToken().id, 1000, { metadata: { checkout_session_id: cs } })
    fake().fail({ path: PATH, with: "timeout" })
    const error = await rejection(sdk(fake(), { timeout: 300 }).paymentIntents.create(params, { idempotencyKey: k }))
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError)
    expect(error.message).toContain("timeout")
    expect(intentsFor(cs).map((pi) => pi.status)).toEqual(["succeeded"])

    const retried = await sdk(fake()).paymentIntents.create(params, { idempotencyKey: k })
    expect(retried.id).toBe(intentsFor(cs)[0]!.id)
    expect(retried.lastResponse.headers["idempotent-replayed"]).toBe("true")
    expect(attemptsOf(k).map((r) => r.status)).toEqual([null, 200])
    expect(fake().charges().filter((c) => c.payment_intent === retried.id)).toHaveLength(1)
  })

  it("drop-after-processing: the SDK retries a closed connection once by itself and gets the saved answer", async () => {
    const cs = session()
    const k = `drop-${cs}`
    fake().fail({ path: PATH, with: "drop-after-processing" })
    const intent = await sdk(fake()).paymentIntents.create(
      payWith(fake().grantToken().id, 1000, { metadata: { checkout_session_id: cs } }),
      { idempotencyKey: k }
    )
    expect(intent.status).toBe("succeeded")
    expect(attemptsOf(k).map((r) => [r.fault, r.replayed])).toEqual([["drop-after-processing", false], [null, true]])
    expect(intentsFor(cs)).toHaveLength(1)
  })

  it("dropped twice: StripeConnectionError; the caller's retry with the key gets the one PaymentIntent", async () => {
    const cs = session()
    const k = `drop2-${cs}`
    const params = payWith(fake().grantToken().id, 1000, { metadata: { checkout_session_id: cs } })
    fake().fail({ path: PATH, times: 2, with: "drop-after-processing" })
    const error = await rejection(sdk(fake()).paymentIntents.create(params, { idempotencyKey: k }))
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError)
    const retried = await sdk(fake()).paymentIntents.create(params, { idempotencyKey: k })
    expect(intentsFor(cs).map((pi) => pi.id)).toEqual([retried.id])
  })

  it("drop-before-processing: nothing was done, so the SDK's retry runs the request", async () => {
    const cs = session()
    const k = `dropb-${cs}`
    fake().fail({ path: PATH, with: "drop-before-processing" })
    await sdk(fake()).paymentIntents.create({ amount: 1000, currency: "usd", metadata: { checkout_session_id: cs } }, {
      idempotencyKey: k
    })
    expect(attemptsOf(k).map((r) => r.replayed)).toEqual([false, false])
    expect(intentsFor(cs)).toHaveLength(1)
  })

  it("faults strike only matching requests, as many times as armed", async () => {
    const stripe = sdk(fake())
    fake().fail({ path: /^\/v1\/refunds/, times: 1, with: "500" })
    await stripe.paymentIntents.create({ amount: 1000, currency: "usd" })
    const paid = await stripe.paymentIntents.create(payWith(fake().grantToken().id, 1000))
    expect((await rejection(stripe.refunds.create({ payment_intent: paid.id }))).statusCode).toBe(500)
    expect((await stripe.refunds.create({ payment_intent: paid.id })).amount).toBe(1000)
  })
})
