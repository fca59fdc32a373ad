/**
 * JSON nested deeper than `MAX_JSON_DEPTH` to every route that reads a body: 400 `invalid_json`
 * naming the first too-deep value, nothing stored. Depths from just over the bound to half a
 * million levels (under 1 MiB), where re-serializing the value would overflow the stack.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { signPayload } from "../../src/shared/hmac-signature.ts"
import { MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts"
import { SqlReceivedEventsStore } from "../../src/webhook-receiver/store/sql-received-events-store.ts"
import { cancelRequest, createRequest, idempotencyKey } from "../support/acp-fixtures.ts"
import { DELEGATE_PATH, NOW, validDelegateRequest } from "../support/delegate.ts"
import { address, buyer, createReadySession, get, paymentData, post, request, testApp } from "../support/http.ts"
import { memoryState, rowCount, testAppWithMemory } from "../support/memory-state.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"
import { createOrder } from "../support/webhooks.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW), effect),
    testAppWithMemory() as Layer.Layer<any>
  ) as Effect.Effect<
    A,
    E,
    never
  >

/** Just over the bound, the few thousand levels of the report, and half a million levels (~1 MB). */
const DEPTHS = [MAX_JSON_DEPTH + 1, 5_000, 500_000]

/** `body` as JSON text with an `extra` field holding `levels` nested arrays. */
const withDeepExtra = (body: object, levels: number) =>
  JSON.stringify(body).slice(0, -1) + `,"extra":${"[".repeat(levels)}${"]".repeat(levels)}}`

/** The param of the first too-deep value under `prefix`, a value at `extraDepth` (the top level is 1). */
const deepParam = (prefix: string, extraDepth: number) => prefix + "[0]".repeat(MAX_JSON_DEPTH + 1 - extraDepth)

const event = {
  type: "order_create",
  data: {
    type: "order",
    id: "ord_deep",
    checkout_session_id: "cs_deep",
    permalink_url: "https://merchant.test/orders/ord_deep",
    status: "created",
    refunds: []
  }
}

/** `event` with an `extra` field of `levels` nested arrays in its data. */
const deepEvent = (levels: number) =>
  JSON.stringify(event).slice(0, -2) + `,"extra":${"[".repeat(levels)}${"]".repeat(levels)}}}`

/** POSTs `body` to the order-event receiver, signed as the merchant signs it. */
const deliver = (body: string, secret = "whsec_test") =>
  request("POST", "/agentic_checkout/webhooks/order_events", {
    body,
    auth: false,
    version: false,
    headers: { "merchant-signature": signPayload(secret, Math.floor(NOW / 1000), body) }
  })

const tooDeep = (param: string) => ({
  type: "invalid_request",
  code: "invalid_json",
  message: `JSON must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
  param
})

/** Sends `send()` for each depth: 400 `invalid_json` at the expected param, and no stored row changed. */
const refusedEverywhere = (
  send: (levels: number) => ReturnType<typeof post>,
  expected: (param: string) => unknown,
  param = deepParam("$.extra", 2)
) =>
  Effect.gen(function*() {
    for (const levels of DEPTHS) {
      const before = yield* memoryState
      const response = yield* send(levels)
      expect(response.status, `${levels} levels`).toBe(400)
      expect(response.body, `${levels} levels`).toEqual(expected(param))
      expect(yield* memoryState).toEqual(before)
    }
  })

describe("a body nested deeper than MAX_JSON_DEPTH", () => {
  it.effect("a bare deep array is refused at its first too-deep level", () =>
    run(Effect.gen(function*() {
      const before = yield* memoryState
      const response = yield* post("/checkout_sessions", "[".repeat(500_000) + "]".repeat(500_000))
      expect(response.status).toBe(400)
      expect(response.body).toEqual(tooDeep("$" + "[0]".repeat(MAX_JSON_DEPTH)))
      expect(yield* memoryState).toEqual(before)
      // The bound itself is accepted as JSON (then refused by the schema, at the top level).
      const atBound = yield* post("/checkout_sessions", "[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))
      expect(atBound.status).toBe(400)
      expect(atBound.body.code).not.toBe("invalid_json")
    })))

  it.effect("2025-09-29 checkout create, update, complete: 400 invalid_json, nothing stored", () =>
    run(Effect.gen(function*() {
      const create = { items: [{ id: "tshirt-classic", quantity: 1 }], buyer, fulfillment_address: address }
      yield* refusedEverywhere((levels) => post("/checkout_sessions", withDeepExtra(create, levels)), tooDeep)
      const session = yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])
      expect(yield* rowCount("checkout_sessions")).toBe(1)
      yield* refusedEverywhere(
        (levels) => post(`/checkout_sessions/${session.id}`, withDeepExtra({ buyer }, levels)),
        tooDeep
      )
      yield* refusedEverywhere(
        (levels) =>
          post(`/checkout_sessions/${session.id}/complete`, withDeepExtra({ payment_data: paymentData }, levels)),
        tooDeep
      )
      expect((yield* get(`/checkout_sessions/${session.id}`)).body).toEqual(session)
    })))

  it.effect("2025-09-29 cancel and the order routes without a body: one sent is checked all the same", () =>
    run(Effect.gen(function*() {
      const session = yield* createReadySession([{ id: "tshirt-classic", quantity: 1 }])
      yield* refusedEverywhere(
        (levels) => post(`/checkout_sessions/${session.id}/cancel`, withDeepExtra({ note: "ignored" }, levels)),
        tooDeep
      )
      expect((yield* get(`/checkout_sessions/${session.id}`)).body).toEqual(session)
      const order = yield* createOrder()
      for (const action of ["confirm", "hold", "cancel"]) {
        yield* refusedEverywhere(
          (levels) => post(`/orders/${order.id}/${action}`, withDeepExtra({ note: "ignored" }, levels)),
          tooDeep
        )
      }
      expect((yield* get(`/orders/${order.id}`)).body.status).toBe("created")
    })))

  it.effect("2026-04-17 checkout create, update, complete, cancel (with Idempotency-Key): 400, nothing stored", () =>
    run(Effect.gen(function*() {
      const version = "2026-04-17"
      const send = (path: string, body: string) =>
        post(path, body, { version, headers: { "idempotency-key": idempotencyKey() } })
      yield* refusedEverywhere(
        (levels) => send("/checkout_sessions", withDeepExtra(createRequest(version), levels)),
        tooDeep
      )
      const created = yield* send("/checkout_sessions", JSON.stringify(createRequest(version)))
      expect(created.status).toBe(201)
      const id = created.body.id as string
      yield* refusedEverywhere((levels) => send(`/checkout_sessions/${id}`, withDeepExtra({ buyer }, levels)), tooDeep)
      yield* refusedEverywhere(
        (levels) => send(`/checkout_sessions/${id}/complete`, withDeepExtra({ buyer }, levels)),
        tooDeep
      )
      yield* refusedEverywhere(
        (levels) => send(`/checkout_sessions/${id}/cancel`, withDeepExtra(cancelRequest, levels)),
        tooDeep
      )
      expect((yield* get(`/checkout_sessions/${id}`, { version })).body.status).not.toBe("canceled")
    })))

  it.effect("delegate payment: the version's JSON refusal with the param, no token stored", () =>
    run(Effect.gen(function*() {
      yield* refusedEverywhere((levels) => post(DELEGATE_PATH, withDeepExtra(validDelegateRequest(), levels)), tooDeep)
      yield* refusedEverywhere(
        (levels) =>
          post(DELEGATE_PATH, withDeepExtra(validDelegateRequest(), levels), {
            version: "2026-04-17",
            headers: { "idempotency-key": idempotencyKey() }
          }),
        (param) => ({ ...tooDeep(param), code: "invalid_card" })
      )
      expect(yield* rowCount("vault_tokens")).toBe(0)
    })))

  it.effect("order ship and refund: 400, the order unchanged", () =>
    run(Effect.gen(function*() {
      const order = yield* createOrder()
      expect((yield* post(`/orders/${order.id}/confirm`)).status).toBe(200)
      const shipped = yield* get(`/orders/${order.id}`)
      yield* refusedEverywhere(
        (levels) => post(`/orders/${order.id}/ship`, withDeepExtra({ carrier: "UPS", tracking_number: "1Z" }, levels)),
        tooDeep
      )
      yield* refusedEverywhere(
        (levels) => post(`/orders/${order.id}/refunds`, withDeepExtra({ type: "full", amount: 1 }, levels)),
        tooDeep
      )
      expect((yield* get(`/orders/${order.id}`)).body).toEqual(shipped.body)
    })))

  it.effect("a correctly signed order event with a deep extra field: 400 after the signature check, nothing kept", () =>
    run(Effect.gen(function*() {
      // Unsigned (wrong secret): 401 first, nothing about the payload said.
      expect((yield* deliver(deepEvent(500_000), "whsec_other")).status).toBe(401)
      yield* refusedEverywhere((levels) => deliver(deepEvent(levels)), tooDeep, deepParam("$.data.extra", 3))
      expect((yield* get("/agentic_checkout/orders")).body).toEqual({ data: [] })
      // The same event without the deep field is kept (the check above could see a stored one).
      expect((yield* deliver(JSON.stringify(event))).status).toBe(200)
      expect(yield* rowCount("received_events")).toBe(1)
    })))

  it.effect("the same on the SQL store, which re-serializes what it keeps", () =>
    Effect.provide(
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        for (const levels of DEPTHS) {
          const response = yield* deliver(deepEvent(levels))
          expect(response.status, `${levels} levels`).toBe(400)
          expect(response.body).toEqual(tooDeep(deepParam("$.data.extra", 3)))
        }
        expect((yield* get("/agentic_checkout/orders")).body).toEqual({ data: [] })
        expect((yield* deliver(JSON.stringify(event))).status).toBe(200)
        expect((yield* get("/agentic_checkout/orders")).body.data).toHaveLength(1)
      }),
      testApp({
        receivedEventsStore: SqlReceivedEventsStore.pipe(
          Layer.provide(hasPostgres ? postgresDatabase() : embeddedDatabase())
        )
      })
    ), { timeout: 60_000 })
})
