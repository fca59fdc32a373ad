/**
 * What the idempotency tests through the HTTP surface share: a fresh application with an approving,
 * counting payment provider, memory stores of their own, a create body, requests with an
 * Idempotency-Key and the checks on their answers (replayed or not, the 409s).
 */
import { expect } from "@effect/vitest"
import { Clock, Effect, Either, Layer, Option } from "effect"
import type { CheckoutStoreService } from "../../src/checkout/checkout-store.ts"
import { type Charge, type ChargeRequest, PaymentRejected } from "../../src/payments/model/payment.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { make as makeMemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { make as makeMemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import {
  address,
  buyer,
  type RequestOptions,
  testApp,
  type TestAppOptions,
  type TestResponse
} from "../support/http.ts"

/** A memory checkout store on a memory database of its own. */
export const memoryCheckoutStore = Effect.provide(makeMemoryCheckoutStore, freshMemoryDatabase)

/** A memory idempotency store on a memory database of its own. */
export const memoryIdempotencyStore = Effect.provide(makeMemoryIdempotencyStore, freshMemoryDatabase)

/**
 * A payment provider that approves everything and records every `charge` call; a key the
 * settlement closed (`settleCharge` with no charge under it) is refused.
 */
export const countingPayments = (options: { readonly dieOnFirstCharge?: boolean } = {}) => {
  const calls: Array<ChargeRequest> = []
  const made = new Map<string, Charge>()
  const closed = new Set<string>()
  const layer = Layer.succeed(PaymentProvider, {
    threeDSecure: false,
    authorize: () => Effect.void,
    charge: (request) =>
      Effect.suspend(() => {
        calls.push(request)
        if (closed.has(request.idempotencyKey)) {
          return Effect.fail(new PaymentRejected({ message: "settled without a charge", param: "$.payment_data" }))
        }
        if (options.dieOnFirstCharge === true && calls.length === 1) return Effect.die(new Error("processor crashed"))
        const charge: Charge = { id: `ch_${calls.length}`, amount: request.amount, currency: request.currency }
        made.set(request.idempotencyKey, charge)
        return Effect.succeed(charge)
      }),
    release: () => Effect.void,
    settleCharge: ({ idempotencyKey }) =>
      Effect.sync(() => {
        const charge = made.get(idempotencyKey)
        if (charge === undefined) closed.add(idempotencyKey)
        return Option.map(Option.fromNullable(charge), Either.right)
      })
  })
  return { calls, layer }
}

/** Runs `effect` against a fresh application (with an approving, counting payment provider). */
export const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, testApp({ payments: countingPayments().layer, ...options })) as Effect.Effect<A, E, never>

/** Request options with the Idempotency-Key header set to `key`. */
export const withKey = (key: string, options: Omit<RequestOptions, "body"> = {}): Omit<RequestOptions, "body"> => ({
  ...options,
  headers: { ...options.headers, "idempotency-key": key }
})

/** A body for POST /checkout_sessions: two classic t-shirts, a buyer and an address. */
export const createBody = { items: [{ id: "tshirt-classic", quantity: 2 }], buyer, fulfillment_address: address }

/** Whether `response` is a stored answer replayed (`Idempotent-Replayed: true`). */
export const isReplay = (response: TestResponse) => response.headers.get("idempotent-replayed") === "true"

/** Units of `productId` held by live reservations in `store`. */
export const reserved = (store: CheckoutStoreService, productId: string) =>
  Clock.currentTimeMillis.pipe(
    Effect.flatMap((now) => store.inventory.stockLevels(now)),
    Effect.map((levels) => levels.find((l) => l.productId === productId)?.reserved ?? 0)
  )

/** `response` is the checkout family's 409 with `code`, not a replay. */
export const expectIdempotencyError = (
  response: TestResponse,
  code: "idempotency_conflict" | "idempotency_in_flight"
) => {
  expect(response.status).toBe(409)
  expect(response.body).toEqual({ type: "request_not_idempotent", code, message: expect.any(String) })
  expect(isReplay(response)).toBe(false)
}
