/**
 * The behaviour every `VaultStore` must have, and the vault's encryption through it.
 * `vaultStoreContract(name, layer, options)` registers the cases for one implementation; each case
 * uses its own token ids, so the cases share one store.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { StorageError } from "../../src/db/storage-error.ts"
import { VaultStore, type VaultTokenRecord } from "../../src/delegate-payment/vault-store.ts"
import { CardUnreadable, makeVault, Vault } from "../../src/delegate-payment/vault.ts"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import { claimLost } from "../../src/idempotency/idempotent-answer.ts"
import { Ids } from "../../src/platform/ids.ts"
import { CARD_CVC, CARD_NUMBER, validated } from "../support/delegate.ts"
import { claimedKey } from "../support/idempotency-claims.ts"

const uid = (prefix: string) => `${prefix}${randomUUID().replaceAll("-", "")}`

export const VAULT_KEY = Redacted.make(Buffer.alloc(32, 7).toString("base64"))
const OTHER_KEY = Redacted.make(Buffer.alloc(32, 9).toString("base64"))

/** A complete token record (every optional part present when `used`). */
export const makeRecord = (id: string, overrides: Partial<VaultTokenRecord> = {}): VaultTokenRecord => ({
  id,
  clientKeyId: "key_abc123",
  allowance: {
    reason: "one_time",
    max_amount: 123_456_789_012,
    currency: "eur",
    checkout_session_id: "cs_contract",
    merchant_id: "merchant_ünï",
    expiresAt: Date.parse("2031-05-06T07:08:09.123Z")
  },
  riskSignals: [
    { type: "card_testing", score: 3, action: "authorized" },
    { type: "card_testing", score: 70, action: "manual_review" }
  ],
  metadata: { source: "agent", merchant_id: "merchant_ünï", "quote\"d": "✓" },
  createdAt: Date.parse("2026-01-30T12:00:00.456Z"),
  card: {
    key_id: "0a1b2c3d",
    iv: Buffer.alloc(12, 1).toString("base64"),
    ciphertext: Buffer.from([0, 1, 2, 250, 255, 0, 7]).toString("base64"),
    tag: Buffer.alloc(16, 2).toString("base64")
  },
  fingerprint: "f".repeat(64),
  brand: "visa",
  last4: "4242",
  funding: "debit",
  state: "active",
  ...overrides
})

export interface VaultStoreContractOptions<R> {
  /** Several connections: real lock contention can be observed (PostgreSQL). */
  readonly multiConnection: boolean
  /** Flips one byte of the stored ciphertext of a token, behind the store's back (SQL only). */
  readonly flipStoredCiphertextByte?: (id: string) => Effect.Effect<void, unknown, R>
  readonly timeout?: number
}

const flip = (base64: string, index = 0): string => {
  const bytes = Buffer.from(base64, "base64")
  bytes[index] = bytes[index]! ^ 0x01
  return bytes.toString("base64")
}

export const vaultStoreContract = <R>(
  name: string,
  storeLayer: Layer.Layer<VaultStore | IdempotencyStore | R, unknown>,
  options: VaultStoreContractOptions<R>
) => {
  const vaultOf = (
    vaultKey: Redacted.Redacted<string>,
    retiredVaultKeys: ReadonlyArray<Redacted.Redacted<string>> = []
  ) => Layer.effect(Vault, makeVault({ vaultKey, retiredVaultKeys })).pipe(Layer.provide(Ids.Live))
  const all = vaultOf(VAULT_KEY).pipe(Layer.provideMerge(storeLayer))

  layer(all, { timeout: options.timeout ?? 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("insert, get and lock round-trip a full record", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const active = makeRecord(uid("vt_"))
        const used = makeRecord(uid("vt_"), {
          state: "used",
          usedAt: Date.parse("2026-02-01T00:00:00.001Z"),
          usedBySession: "cs_x"
        })
        yield* store.insertToken(active)
        yield* store.insertToken(used)
        expect(yield* store.getToken(active.id)).toEqual(Option.some(active))
        expect(yield* store.getToken(used.id)).toEqual(Option.some(used))
        expect(yield* store.transaction(store.lockToken(active.id))).toEqual(Option.some(active))
        expect(yield* store.getToken(uid("vt_"))).toEqual(Option.none())
        expect(yield* store.transaction(store.lockToken(uid("vt_")))).toEqual(Option.none())
      }))

    it.effect("the extremes the API accepts round-trip: expiry at the end of year 9999, astral text", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const base = makeRecord(uid("vt_"))
        const record = makeRecord(base.id, {
          allowance: { ...base.allowance, expiresAt: Date.parse("9999-12-31T23:59:59.999Z") },
          metadata: { note: "emoji 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢" }
        })
        yield* store.insertToken(record)
        expect(yield* store.getToken(record.id)).toEqual(Option.some(record))
      }))

    it.effect("insertToken with an answer: both in one step; a lost claim stores neither", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const keys = yield* IdempotencyStore
        const now = Date.parse("2026-02-01T00:00:00.000Z")
        const { answerOf, completed, scope } = yield* claimedKey(now, "/agentic_commerce/delegate_payment")

        const lost = makeRecord(uid("vt_"))
        expect(yield* Effect.flip(store.insertToken(lost, answerOf("claim_b")))).toBe(claimLost)
        expect(yield* store.getToken(lost.id)).toEqual(Option.none())
        expect(Option.map(yield* keys.find(scope, now), (record) => record.state)).toEqual(Option.some("in_flight"))

        const written = makeRecord(uid("vt_"))
        yield* store.insertToken(written, answerOf("claim_a"))
        expect(yield* store.getToken(written.id)).toEqual(Option.some(written))
        expect(yield* keys.find(scope, now)).toEqual(Option.some(completed))
      }))

    it.effect("a duplicate token id fails with StorageError failure", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const record = makeRecord(uid("vt_"))
        yield* store.insertToken(record)
        const error = yield* Effect.flip(store.insertToken({ ...record, brand: "amex" }))
        expect(error).toBeInstanceOf(StorageError)
        expect(error.reason).toBe("failure")
        expect(Option.getOrThrow(yield* store.getToken(record.id)).brand).toBe("visa")
      }))

    it.effect("markTokenUsed consumes an active token once, only for its session, and answers it as stored", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const record = makeRecord(uid("vt_"))
        yield* store.insertToken(record)
        const at = Date.parse("2026-01-30T12:30:00.789Z")
        // Another session cannot take it, not even while it is active.
        expect(yield* store.markTokenUsed(record.id, "cs_other", at)).toEqual(Option.none())
        expect(Option.getOrThrow(yield* store.getToken(record.id)).state).toBe("active")
        const used = { ...record, state: "used" as const, usedAt: at, usedBySession: "cs_contract" }
        expect(yield* store.markTokenUsed(record.id, "cs_contract", at)).toEqual(Option.some(used))
        expect(yield* store.markTokenUsed(record.id, "cs_contract", at + 1)).toEqual(Option.none())
        expect(yield* store.markTokenUsed(uid("vt_"), "cs_contract", at)).toEqual(Option.none())
        expect(yield* store.getToken(record.id)).toEqual(Option.some(used))
        // Given back, it can be consumed again.
        expect(yield* store.releaseToken(record.id, "cs_contract")).toBe(true)
        expect(Option.map(yield* store.markTokenUsed(record.id, "cs_contract", at + 2), (r) => r.usedAt))
          .toEqual(Option.some(at + 2))
      }))

    it.effect("lockToken then markTokenUsed inside one transaction", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const record = makeRecord(uid("vt_"))
        yield* store.insertToken(record)
        const result = yield* store.transaction(Effect.gen(function*() {
          const locked = Option.getOrThrow(yield* store.lockToken(record.id))
          expect(locked.state).toBe("active")
          return yield* store.markTokenUsed(record.id, "cs_contract", 1_000)
        }))
        expect(Option.isSome(result)).toBe(true)
        expect(Option.getOrThrow(yield* store.getToken(record.id)).state).toBe("used")
      }))

    it.effect("a failed transaction leaves no trace; a failed nested one undoes only its own writes", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const kept = makeRecord(uid("vt_"))
        const consumed = makeRecord(uid("vt_"))
        yield* store.insertToken(consumed)
        const insertedThenRolledBack = makeRecord(uid("vt_"))
        const exit = yield* Effect.exit(store.transaction(Effect.gen(function*() {
          yield* store.insertToken(insertedThenRolledBack)
          expect(Option.isSome(yield* store.markTokenUsed(consumed.id, "cs_contract", 5))).toBe(true)
          return yield* Effect.fail("boom" as const)
        })))
        expect(exit).toEqual(Exit.fail("boom"))
        expect(yield* store.getToken(insertedThenRolledBack.id)).toEqual(Option.none())
        expect(Option.getOrThrow(yield* store.getToken(consumed.id)).state).toBe("active")

        yield* store.transaction(Effect.gen(function*() {
          yield* store.insertToken(kept)
          const inner = yield* Effect.exit(store.transaction(
            Effect.zipRight(store.markTokenUsed(consumed.id, "cs_contract", 6), Effect.fail("inner" as const))
          ))
          expect(Exit.isFailure(inner)).toBe(true)
        }))
        expect(Option.isSome(yield* store.getToken(kept.id))).toBe(true)
        expect(Option.getOrThrow(yield* store.getToken(consumed.id)).state).toBe("active")
      }))

    it.effect("concurrent markTokenUsed calls: exactly one wins", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const record = makeRecord(uid("vt_"))
        yield* store.insertToken(record)
        const results = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => store.markTokenUsed(record.id, "cs_contract", 1_000 + i),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Option.isSome)).toHaveLength(1)
        const winner = results.findIndex(Option.isSome)
        expect(Option.getOrThrow(results[winner]!).usedAt).toBe(1_000 + winner)
        expect(Option.getOrThrow(yield* store.getToken(record.id)).usedAt).toBe(1_000 + winner)
      }))

    it.effect("concurrent lock-check-consume transactions: exactly one consumes", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const record = makeRecord(uid("vt_"))
        yield* store.insertToken(record)
        const attempt = (i: number) =>
          store.transaction(Effect.gen(function*() {
            const locked = yield* store.lockToken(record.id)
            if (Option.isNone(locked) || locked.value.state !== "active") return "seen_used" as const
            return Option.isSome(yield* store.markTokenUsed(record.id, "cs_contract", 2_000 + i))
              ? "consumed" as const
              : "lost" as const
          }))
        const results = yield* Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7], attempt, { concurrency: "unbounded" })
        expect(results.filter((r) => r === "consumed")).toHaveLength(1)
        // With the row lock, the losers wait and then see the token used; none races past the check.
        expect(results.filter((r) => r === "lost")).toHaveLength(0)
      }))

    if (options.multiConnection) {
      it.effect("lockToken blocks a second transaction until the first commits", () =>
        Effect.gen(function*() {
          const store = yield* VaultStore
          const record = makeRecord(uid("vt_"))
          yield* store.insertToken(record)
          const order: Array<string> = []
          const first = yield* Effect.fork(store.transaction(Effect.gen(function*() {
            yield* store.lockToken(record.id)
            order.push("first locked")
            yield* Effect.sleep("300 millis")
            const won = Option.isSome(yield* store.markTokenUsed(record.id, "cs_contract", 3_000))
            order.push("first done")
            return won
          })))
          yield* Effect.sleep("100 millis")
          const second = yield* store.transaction(Effect.gen(function*() {
            const locked = Option.getOrThrow(yield* store.lockToken(record.id))
            order.push(`second sees ${locked.state}`)
            return locked.state
          }))
          expect(yield* Fiber.join(first)).toBe(true)
          expect(second).toBe("used")
          expect(order).toEqual(["first locked", "first done", "second sees used"])
        }))
    }

    it.effect("findTokenIdsByFingerprint: same card, newest first, bounded", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const fingerprint = uid("").padEnd(64, "0")
        const older = makeRecord(uid("vt_"), { fingerprint, createdAt: 1_000 })
        const newer = makeRecord(uid("vt_"), { fingerprint, createdAt: 2_000 })
        yield* store.insertToken(older)
        yield* store.insertToken(newer)
        yield* store.insertToken(makeRecord(uid("vt_")))
        expect(yield* store.findTokenIdsByFingerprint(fingerprint, 10)).toEqual([newer.id, older.id])
        expect(yield* store.findTokenIdsByFingerprint(fingerprint, 1)).toEqual([newer.id])
        expect(yield* store.findTokenIdsByFingerprint(fingerprint, 0)).toEqual([])
      }))

    it.effect("Vault: tokenize stores only the envelope; revealCard opens it; the same card has the same fingerprint", () =>
      Effect.gen(function*() {
        const vault = yield* Vault
        const store = yield* VaultStore
        const response = yield* vault.tokenize(validated(), { clientKeyId: "key_1", idempotencyKey: "k-1" })
        expect(response.metadata).toEqual({ source: "agent", merchant_id: "merchant_test", idempotency_key: "k-1" })
        const record = Option.getOrThrow(yield* store.getToken(response.id))
        const text = JSON.stringify(record)
        expect(text).not.toContain(CARD_NUMBER)
        expect(text).not.toContain(CARD_NUMBER.slice(6, 12))
        expect(text).not.toContain(`"${CARD_CVC}"`)
        expect(record.card.key_id).toMatch(/^[0-9a-f]{8}$/)
        const card = yield* vault.revealCard(record)
        expect(card).toMatchObject({ number: CARD_NUMBER, cvc: CARD_CVC, exp_month: "12", exp_year: "2030" })

        const again = yield* vault.tokenize(validated(), { clientKeyId: "key_1" })
        const second = Option.getOrThrow(yield* store.getToken(again.id))
        expect(second.fingerprint).toBe(record.fingerprint)
        expect(second.card.ciphertext).not.toBe(record.card.ciphertext) // fresh IV
        expect(yield* store.findTokenIdsByFingerprint(record.fingerprint, 5)).toEqual(
          expect.arrayContaining([record.id, again.id])
        )
      }))

    it.effect("Vault: a changed envelope or a moved one fails with CardUnreadable, never with card data", () =>
      Effect.gen(function*() {
        const vault = yield* Vault
        const store = yield* VaultStore
        const { id } = yield* vault.tokenize(validated(), { clientKeyId: "key_1" })
        const record = Option.getOrThrow(yield* store.getToken(id))
        const reasonOf = (r: VaultTokenRecord) =>
          Effect.map(Effect.either(vault.revealCard(r)), (result) => {
            if (Either.isRight(result)) throw new Error("expected the card to be unreadable")
            expect(result.left).toBeInstanceOf(CardUnreadable)
            expect(result.left.message).not.toContain(CARD_NUMBER)
            return result.left.reason
          })
        expect(yield* reasonOf({ ...record, card: { ...record.card, ciphertext: flip(record.card.ciphertext, 3) } }))
          .toBe("authentication_failed")
        expect(yield* reasonOf({ ...record, card: { ...record.card, tag: flip(record.card.tag) } })).toBe(
          "authentication_failed"
        )
        expect(yield* reasonOf({ ...record, card: { ...record.card, iv: flip(record.card.iv) } })).toBe(
          "authentication_failed"
        )
        // The envelope is bound to its token id.
        expect(yield* reasonOf({ ...record, id: uid("vt_") })).toBe("authentication_failed")
        expect(yield* reasonOf({ ...record, card: { ...record.card, key_id: "00000000" } })).toBe("unknown_key")
        expect(yield* reasonOf({ ...record, card: { ...record.card, iv: "!!" } })).toBe("malformed")
      }))

    if (options.flipStoredCiphertextByte !== undefined) {
      const flipStored = options.flipStoredCiphertextByte
      it.effect("Vault: a byte flipped in the stored envelope → revealCard fails with CardUnreadable", () =>
        Effect.gen(function*() {
          const vault = yield* Vault
          const store = yield* VaultStore
          const { id } = yield* vault.tokenize(validated(), { clientKeyId: "key_1" })
          expect(Either.isRight(yield* Effect.either(vault.revealCard(Option.getOrThrow(yield* store.getToken(id))))))
            .toBe(true)
          yield* flipStored(id)
          const tampered = Option.getOrThrow(yield* store.getToken(id))
          const error = yield* Effect.flip(vault.revealCard(tampered))
          expect(error).toEqual(new CardUnreadable({ tokenId: id, reason: "authentication_failed" }))
        }))
    }

    it.effect("Vault: key rotation — a retired key still opens its envelopes; an unknown key does not", () =>
      Effect.gen(function*() {
        const store = yield* VaultStore
        const oldVault = yield* Vault
        const { id } = yield* oldVault.tokenize(validated(), { clientKeyId: "key_1" })
        const record = Option.getOrThrow(yield* store.getToken(id))
        const rotated = yield* Effect.provide(Vault, vaultOf(OTHER_KEY, [VAULT_KEY]))
        expect((yield* rotated.revealCard(record)).number).toBe(CARD_NUMBER)
        const { id: newId } = yield* rotated.tokenize(validated(), { clientKeyId: "key_1" })
        const newRecord = Option.getOrThrow(yield* store.getToken(newId))
        expect(newRecord.card.key_id).not.toBe(record.card.key_id)
        expect(newRecord.fingerprint).not.toBe(record.fingerprint) // fingerprints are keyed by the current key
        const withoutOld = yield* Effect.provide(Vault, vaultOf(OTHER_KEY))
        expect((yield* Effect.flip(withoutOld.revealCard(record))).reason).toBe("unknown_key")
      }))
  })
}
