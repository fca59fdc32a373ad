/**
 * The `AuthenticationStore` contract against the three implementations: in memory, SQL over
 * embedded PGlite, and SQL over PostgreSQL (only when `TEST_DATABASE_URL` is set): a session
 * round-trips whole (absent fields stay absent), steps are compare-and-set on the status and
 * action, a result is used by one checkout session only.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { AuthenticationStore } from "../../src/delegate-authentication/authentication-store.ts"
import {
  type AuthenticationSession,
  createSession
} from "../../src/delegate-authentication/model/authentication-session.ts"
import { SqlAuthenticationStore } from "../../src/delegate-authentication/store/sql-authentication-store.ts"
import { MemoryAuthenticationStore } from "../doubles/memory-authentication-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase } from "../support/test-database.ts"

const newSession = (overrides: Partial<AuthenticationSession> = {}): AuthenticationSession => ({
  ...createSession(
    {
      id: `authn_${randomUUID()}`,
      clientKeyId: "key_1",
      merchantId: "merchant_test",
      checkoutSessionId: undefined,
      amount: 5375,
      currency: "USD",
      card: { fingerprint: "fp", brand: "visa", last4: "3184" },
      scenario: "challenge",
      acquirerDetails: undefined,
      channelGiven: false,
      challengeNotificationUrl: undefined
    },
    { threeDsServerTransId: randomUUID(), acsTransId: randomUUID(), dsTransId: randomUUID(), cryptogram: "c2VjcmV0" },
    1_000,
    600_000
  ),
  ...overrides
})

const contract = (name: string, store: Layer.Layer<AuthenticationStore, unknown>) =>
  layer(store, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("insert, get and find by directory-server transaction id round-trip the session", () =>
      Effect.gen(function*() {
        const store = yield* AuthenticationStore
        const session = newSession({ checkoutSessionId: "cs_1" })
        yield* store.insert(session)
        const read = Option.getOrThrow(yield* store.get(session.id))
        expect(read).toEqual(JSON.parse(JSON.stringify(session)))
        expect(read.challengeNotificationUrl).toBeUndefined()
        expect(Option.getOrThrow(yield* store.findByDsTransId(session.dsTransId)).id).toBe(session.id)
        expect(Option.isNone(yield* store.get("authn_missing"))).toBe(true)
        // An id from a path that storage cannot hold is no session either, never a failure.
        expect(Option.isNone(yield* store.get("authn_x\u0000"))).toBe(true)
        expect(Option.isNone(yield* store.get("authn_\ud800"))).toBe(true)
        expect(Option.isNone(yield* store.findByDsTransId("missing"))).toBe(true)
        expect((yield* Effect.either(store.insert(session)))._tag).toBe("Left")
      }))

    it.effect("update is a compare-and-set on status and action", () =>
      Effect.gen(function*() {
        const store = yield* AuthenticationStore
        const session = newSession()
        yield* store.insert(session)
        const challenged: AuthenticationSession = { ...session, action: "challenge", channelGiven: true }
        expect(yield* store.update(challenged, { status: "action_required", action: "challenge" })).toBe(false)
        expect(yield* store.update(challenged, { status: "action_required", action: "fingerprint" })).toBe(true)
        expect(yield* store.update(challenged, { status: "action_required", action: "fingerprint" })).toBe(false)
        const done: AuthenticationSession = {
          ...challenged,
          status: "authenticated",
          action: undefined,
          result: { transStatus: "Y", eci: "05", cryptogram: "c2VjcmV0" }
        }
        expect(yield* store.update(done, { status: "action_required", action: "challenge" })).toBe(true)
        expect(Option.getOrThrow(yield* store.get(session.id))).toEqual(JSON.parse(JSON.stringify(done)))
      }))

    it.effect("a result is used by one checkout session: again by it, never by another", () =>
      Effect.gen(function*() {
        const store = yield* AuthenticationStore
        const session = newSession()
        yield* store.insert(session)
        expect(yield* store.markUsed(session.id, "cs_a")).toBe(true)
        expect(yield* store.markUsed(session.id, "cs_a")).toBe(true)
        expect(yield* store.markUsed(session.id, "cs_b")).toBe(false)
        expect(yield* store.markUsed("authn_missing", "cs_a")).toBe(false)
        expect(Option.getOrThrow(yield* store.get(session.id)).usedBySession).toBe("cs_a")
      }))
  })

contract("AuthenticationStore: memory", MemoryAuthenticationStore.pipe(Layer.provide(freshMemoryDatabase)))
contract("AuthenticationStore: SQL on embedded PGlite", SqlAuthenticationStore.pipe(Layer.provide(embeddedDatabase())))
describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
  contract("AuthenticationStore: SQL on PostgreSQL", SqlAuthenticationStore.pipe(Layer.provide(postgresDatabase())))
})
