/**
 * What the 3-D Secure test files (`three-d-secure-*.test.ts`) share: running a case against a
 * fresh application on TestClock set to `NOW`, a session ready for payment, a session that
 * required authentication for a card (with its total and `vt_` token), the charges made, and the
 * status, code and param of a refusal.
 */
import { expect } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import {
  amountOf,
  type Client,
  completeRequest,
  createRequest,
  type Json,
  NOW,
  updateRequest
} from "../support/acp-fixtures.ts"
import { testApp, type TestAppOptions } from "../support/http.ts"
import { delegateCard } from "../support/three-d-secure.ts"

/** Runs `effect` against a fresh application (`options` as `testApp`'s), the TestClock at `NOW`. */
export const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), testApp(options)) as Effect.Effect<A, E, never>

/** A session ready for payment and its total. */
export const readySession = (client: Client, create: Json = {}) =>
  Effect.gen(function*() {
    const created = yield* client.created(createRequest(client.version, create))
    const updated = yield* client.update(created.id, updateRequest(client.version))
    expect(updated.body.status).toBe("ready_for_payment")
    return { id: created.id as string, total: amountOf(updated.body.totals, "total")! }
  })

/** A session of `client` that required authentication for `card`: its id, total and vt_ token. */
export const requiringAuthentication = (client: Client, card: string) =>
  Effect.gen(function*() {
    const { id, total } = yield* readySession(client)
    const token = yield* delegateCard(client.version, id, card, total)
    const answer = yield* client.complete(id, completeRequest(client.version, token))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.status).toBe("authentication_required")
    return { id, total, token, session: answer.body as Json }
  })

/** Every charge in the charge store. */
export const charges = Effect.flatMap(ChargeStore, (store) => store.listCharges)

/** The status, code and param of a response, to compare a refusal in one expectation. */
export const refusal = (response: { status: number; body: any }) => ({
  status: response.status,
  code: response.body?.code,
  param: response.body?.param
})
