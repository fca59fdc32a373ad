/**
 * `CheckoutService.settlePayment`: a payment the provider announced final (Stripe's webhook) is settled
 * at once, without the sweep's grace, never charging; a complete still running for the attempt then
 * answers the completed session it finds, not an error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PaymentPending } from "../../src/payments/model/payment.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { createReadySession, get, paymentData, post, testApp } from "../support/http.ts"

/** A provider whose charge lets the test run something first (the webhook overtaking the request). */
const scripted = (state: { beforeCharge: Effect.Effect<void>; settled: "charged" | "pending" | "none" }) =>
  Layer.succeed(PaymentProvider, {
    threeDSecure: false,
    authorize: () => Effect.void,
    charge: (request) =>
      Effect.zipRight(
        Effect.suspend(() => state.beforeCharge),
        Effect.succeed({ id: "ch_scripted", amount: request.amount, currency: request.currency })
      ),
    release: () => Effect.void,
    settleCharge: ({ amount, currency }) =>
      state.settled === "charged"
        ? Effect.succeedSome(Effect.runSync(Effect.either(Effect.succeed({ id: "ch_scripted", amount, currency }))))
        : state.settled === "pending"
        ? Effect.fail(new PaymentPending({ reason: "processing", retryAfterSeconds: 5 }))
        : Effect.succeedNone
  })

const attemptOf = (id: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.readSessionForPayment(id)).pipe(
    Effect.map((read) => Option.getOrUndefined(Option.flatMap(read, (found) => found.latestAttempt))?.state)
  )

describe("settlePayment", () => {
  it.effect("a webhook settles the attempt first: the running complete answers the completed session", () => {
    const state = { beforeCharge: Effect.void as Effect.Effect<void>, settled: "charged" as const }
    return Effect.gen(function*() {
      const checkout = yield* CheckoutService
      const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
      let settlement: string | undefined
      state.beforeCharge = Effect.orDie(checkout.settlePayment(created.id)).pipe(
        Effect.map((settled) => void (settlement = settled))
      )
      const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
      expect(settlement).toBe("completed")
      expect(completed.status).toBe(200)
      expect(completed.body.status).toBe("completed")
      expect(completed.body.order.id).toMatch(/^ord_/)
      const read = yield* get(`/checkout_sessions/${created.id}`)
      expect(read.body.status).toBe("completed")
      expect(yield* attemptOf(created.id)).toBe("succeeded")
    }).pipe(Effect.provide(testApp({ payments: scripted(state) })))
  })

  it.effect("nothing pending, or the provider cannot say yet: none, the attempt left pending", () => {
    const state = { beforeCharge: Effect.void as Effect.Effect<void>, settled: "pending" as "pending" | "none" }
    return Effect.gen(function*() {
      const checkout = yield* CheckoutService
      const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
      expect(yield* checkout.settlePayment(created.id)).toBe("none")
      let during: string | undefined
      state.beforeCharge = Effect.orDie(checkout.settlePayment(created.id)).pipe(
        Effect.map((settled) => void (during = settled))
      )
      const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
      expect(during).toBe("none")
      expect(completed.status).toBe(200)
      expect(yield* checkout.settlePayment("cs_unknown")).toBe("none")
    }).pipe(Effect.provide(testApp({ payments: scripted(state) })))
  })

  it.effect("no charge under the key: the session is payable again at once, the attempt declined", () => {
    const state = { beforeCharge: Effect.void as Effect.Effect<void>, settled: "none" as const }
    return Effect.gen(function*() {
      const checkout = yield* CheckoutService
      const created = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
      let settlement: string | undefined
      state.beforeCharge = Effect.orDie(checkout.settlePayment(created.id)).pipe(
        Effect.map((settled) => void (settlement = settled))
      )
      // The request's charge "succeeds" after the settlement closed the key (a double would not do
      // that; the real providers refuse): the request then finds its attempt settled and answers 409.
      const completed = yield* post(`/checkout_sessions/${created.id}/complete`, { payment_data: paymentData })
      expect(settlement).toBe("payable")
      expect(completed.status).toBe(409)
      expect(yield* attemptOf(created.id)).toBe("declined")
    }).pipe(Effect.provide(testApp({ payments: scripted(state) })))
  })
})
