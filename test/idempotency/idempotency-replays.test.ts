/**
 * Replays (CONTRACT §6) through the HTTP surface: each checkout POST route (create, update,
 * complete, cancel) answers a retry with the same Idempotency-Key and body from what it stored,
 * without running again; 4xx answers are kept too; the delegate payment route returns the same
 * token and its own 409 and 400 objects.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import {
  CARD_NUMBER,
  DELEGATE_PATH,
  delegateRequestWith,
  NOW as DELEGATE_NOW,
  validDelegateRequest
} from "../support/delegate.ts"
import { get, paymentData, post } from "../support/http.ts"
import {
  countingPayments,
  createBody,
  isReplay,
  memoryCheckoutStore,
  reserved,
  run,
  withKey
} from "./idempotency-api-fixtures.ts"

describe("replays of each POST route", () => {
  it.effect("create: the same key and body return the stored 201 and make no second session", () =>
    Effect.gen(function*() {
      const store = yield* memoryCheckoutStore
      yield* run(
        Effect.gen(function*() {
          const first = yield* post("/checkout_sessions", createBody, withKey("create-1"))
          expect(first.status).toBe(201)
          expect(isReplay(first)).toBe(false)
          const second = yield* post("/checkout_sessions", createBody, withKey("create-1"))
          expect(second.status).toBe(201)
          expect(isReplay(second)).toBe(true)
          expect(second.text).toBe(first.text)
          expect(second.body.id).toBe(first.body.id)
          expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"))
          // Request-Id stays per request; the key is echoed on both.
          expect(second.headers.get("request-id")).not.toBe(first.headers.get("request-id"))
          expect(first.headers.get("idempotency-key")).toBe("create-1")
          expect(second.headers.get("idempotency-key")).toBe("create-1")
          // One reservation only.
          expect(yield* reserved(store, "tshirt-classic")).toBe(2)
        }),
        { store: Layer.succeed(CheckoutStore, store) }
      )
    }))

  it.effect("without a key every POST runs", () =>
    Effect.gen(function*() {
      const store = yield* memoryCheckoutStore
      yield* run(
        Effect.gen(function*() {
          const first = yield* post("/checkout_sessions", createBody)
          const second = yield* post("/checkout_sessions", createBody)
          expect(second.body.id).not.toBe(first.body.id)
          expect(first.headers.has("idempotency-key")).toBe(false)
          expect(isReplay(second)).toBe(false)
          expect(yield* reserved(store, "tshirt-classic")).toBe(4)
        }),
        { store: Layer.succeed(CheckoutStore, store) }
      )
    }))

  it.effect("update: a replay returns the stored result and does not apply the update again", () =>
    run(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", createBody)
      const path = `/checkout_sessions/${created.body.id}`
      const first = yield* post(path, { items: [{ id: "mug-ceramic", quantity: 1 }] }, withKey("update-a"))
      expect(first.status).toBe(200)
      const other = yield* post(path, { items: [{ id: "hoodie-zip", quantity: 1 }] }, withKey("update-b"))
      expect(other.status).toBe(200)
      const replay = yield* post(path, { items: [{ id: "mug-ceramic", quantity: 1 }] }, withKey("update-a"))
      expect(replay.status).toBe(200)
      expect(isReplay(replay)).toBe(true)
      expect(replay.text).toBe(first.text)
      const current = yield* get(path)
      expect(current.body.line_items.map((l: { item: { id: string } }) => l.item.id)).toEqual(["hoodie-zip"])
    })))

  it.effect("complete: a replay returns the same order and the card is charged once", () =>
    Effect.gen(function*() {
      const payments = countingPayments()
      yield* run(
        Effect.gen(function*() {
          const created = yield* post("/checkout_sessions", createBody)
          const path = `/checkout_sessions/${created.body.id}/complete`
          const first = yield* post(path, { payment_data: paymentData }, withKey("complete-1"))
          expect(first.status).toBe(200)
          expect(first.body.status).toBe("completed")
          const second = yield* post(path, { payment_data: paymentData }, withKey("complete-1"))
          expect(second.status).toBe(200)
          expect(isReplay(second)).toBe(true)
          expect(second.body.order.id).toBe(first.body.order.id)
          expect(payments.calls).toHaveLength(1)
          // Without the key, the same retry is a second complete: 409 session_completed.
          const unkeyed = yield* post(path, { payment_data: paymentData })
          expect(unkeyed.status).toBe(409)
          expect(payments.calls).toHaveLength(1)
        }),
        { payments: payments.layer }
      )
    }))

  it.effect("cancel: a replay returns the stored 200, not 405", () =>
    run(Effect.gen(function*() {
      const created = yield* post("/checkout_sessions", createBody)
      const path = `/checkout_sessions/${created.body.id}/cancel`
      const first = yield* post(path, undefined, withKey("cancel-1"))
      expect(first.status).toBe(200)
      expect(first.body.status).toBe("canceled")
      const second = yield* post(path, undefined, withKey("cancel-1"))
      expect(second.status).toBe(200)
      expect(isReplay(second)).toBe(true)
      expect(second.text).toBe(first.text)
      const unkeyed = yield* post(path)
      expect(unkeyed.status).toBe(405)
    })))

  it.effect("4xx results are stored and replayed too", () =>
    run(Effect.gen(function*() {
      const body = { items: [{ id: "no-such-product", quantity: 1 }] }
      const first = yield* post("/checkout_sessions", body, withKey("bad-1"))
      expect(first.status).toBe(400)
      const second = yield* post("/checkout_sessions", body, withKey("bad-1"))
      expect(second.status).toBe(400)
      expect(isReplay(second)).toBe(true)
      expect(second.body).toEqual(first.body)
      expect(second.headers.get("idempotency-key")).toBe("bad-1")
    })))
})

describe("the delegate payment route", () => {
  it.effect("a retried tokenization returns the same token; another body is the delegate 409", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(DELEGATE_NOW)
      const first = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("tok-1"))
      expect(first.status).toBe(201)
      const second = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("tok-1"))
      expect(second.status).toBe(201)
      expect(isReplay(second)).toBe(true)
      expect(second.body.id).toBe(first.body.id)
      expect(second.text).not.toContain(CARD_NUMBER)
      const unkeyed = yield* post(DELEGATE_PATH, validDelegateRequest())
      expect(unkeyed.body.id).not.toBe(first.body.id)

      const conflict = yield* post(
        DELEGATE_PATH,
        delegateRequestWith((request) => {
          request.allowance.max_amount = 1000
        }),
        withKey("tok-1")
      )
      expect(conflict.status).toBe(409)
      expect(conflict.body).toEqual({
        type: "invalid_request",
        code: "idempotency_conflict",
        message: expect.any(String)
      })
      const badKey = yield* post(DELEGATE_PATH, validDelegateRequest(), withKey("has space"))
      expect(badKey.status).toBe(400)
      expect(badKey.body).toMatchObject({
        type: "invalid_request",
        code: "invalid_card",
        param: "$.headers['Idempotency-Key']"
      })
    })))
})
