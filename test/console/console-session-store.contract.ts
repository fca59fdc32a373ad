/**
 * The contract of `ConsoleSessionStore`, run against every implementation. Each case uses its own
 * hashes, and times far from the other cases' where a sweep could reach them, so the cases share
 * one store.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { type ConsoleSession, ConsoleSessionStore } from "../../src/console/console-session-store.ts"

const T0 = Date.parse("2026-01-01T00:00:00.000Z")
const HOUR = 3_600_000

const newSession = (createdAt: number, expiresAt: number): ConsoleSession => ({
  tokenHash: randomBytes(32).toString("hex"),
  csrfToken: randomBytes(16).toString("base64url"),
  keyId: "key_0123456789ab",
  createdAt,
  expiresAt
})

export const consoleSessionStoreContract = (name: string, store: Layer.Layer<ConsoleSessionStore, unknown>) =>
  layer(store, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("create then find round-trips the session; an unknown hash finds none", () =>
      Effect.gen(function*() {
        const store = yield* ConsoleSessionStore
        const session = newSession(T0, T0 + 8 * HOUR)
        yield* store.create(session)
        expect(yield* store.find(session.tokenHash, T0)).toEqual(Option.some(session))
        expect(yield* store.find(session.tokenHash, T0 + HOUR)).toEqual(Option.some(session))
        expect(yield* store.find(randomBytes(32).toString("hex"), T0)).toEqual(Option.none())
        expect(yield* store.find("", T0)).toEqual(Option.none())
      }))

    it.effect("a hash already stored cannot be created again", () =>
      Effect.gen(function*() {
        const store = yield* ConsoleSessionStore
        const session = newSession(T0, T0 + HOUR)
        yield* store.create(session)
        const failed = yield* Effect.flip(store.create({ ...session, csrfToken: "other" }))
        expect(failed._tag).toBe("StorageError")
        expect(Option.getOrThrow(yield* store.find(session.tokenHash, T0)).csrfToken).toBe(session.csrfToken)
      }))

    it.effect("a session is expired from its expiresAt on: found 1 ms before, not at it", () =>
      Effect.gen(function*() {
        const store = yield* ConsoleSessionStore
        const session = newSession(T0, T0 + HOUR)
        yield* store.create(session)
        expect(yield* store.find(session.tokenHash, session.expiresAt - 1)).toEqual(Option.some(session))
        expect(yield* store.find(session.tokenHash, session.expiresAt)).toEqual(Option.none())
        expect(yield* store.find(session.tokenHash, session.expiresAt + 1)).toEqual(Option.none())
      }))

    it.effect("remove signs out that session only; removing an absent one does nothing", () =>
      Effect.gen(function*() {
        const store = yield* ConsoleSessionStore
        const mine = newSession(T0, T0 + HOUR)
        const other = newSession(T0, T0 + HOUR)
        yield* store.create(mine)
        yield* store.create(other)
        yield* store.remove(mine.tokenHash)
        expect(yield* store.find(mine.tokenHash, T0)).toEqual(Option.none())
        expect(yield* store.find(other.tokenHash, T0)).toEqual(Option.some(other))
        yield* store.remove(mine.tokenHash)
        yield* store.remove(randomBytes(32).toString("hex"))
        expect(yield* store.find(other.tokenHash, T0)).toEqual(Option.some(other))
      }))

    it.effect("removeExpired removes and counts only the sessions expired at now", () =>
      Effect.gen(function*() {
        const store = yield* ConsoleSessionStore
        // Far in the past: every other case's session expires later than these, so a sweep at
        // `now` reaches only these.
        const past = Date.parse("2001-01-01T00:00:00.000Z")
        const now = past + 10 * HOUR
        const expiredBefore = newSession(past, past + HOUR)
        const expiredAtNow = newSession(past, now)
        const live = newSession(past, now + 1)
        for (const session of [expiredBefore, expiredAtNow, live]) yield* store.create(session)

        expect(yield* store.removeExpired(past)).toBe(0)
        expect(yield* store.removeExpired(now)).toBe(2)
        expect(yield* store.find(live.tokenHash, now)).toEqual(Option.some(live))
        // Gone, not only hidden: found by nothing even at a time before they expired.
        expect(yield* store.find(expiredBefore.tokenHash, past)).toEqual(Option.none())
        expect(yield* store.find(expiredAtNow.tokenHash, past)).toEqual(Option.none())
        expect(yield* store.removeExpired(now)).toBe(0)
        expect(yield* store.removeExpired(now + 1)).toBe(1)
        expect(yield* store.find(live.tokenHash, past)).toEqual(Option.none())
      }))
  })
