/**
 * A claimed Idempotency-Key for the store contracts whose atomic steps store a request's answer
 * (`AnswerToStore`) with their write: the claim, the answer a step stores on it, and the record
 * once stored.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import type { AnswerToStore } from "../../src/idempotency/idempotent-answer.ts"

/**
 * A key claimed (as `claim_a`) at `now`, the answer a write stores on a claim (`answerOf`: its own,
 * or one it lost), and the record once that answer is stored.
 */
export const claimedKey = (now: number, path = "/checkout_sessions") =>
  Effect.gen(function*() {
    const keys = yield* IdempotencyStore
    const scope = { keyId: `key_${randomUUID()}`, method: "POST", path, key: `idem_${randomUUID()}` }
    const claimed = yield* keys.claim(scope, {
      fingerprint: "f",
      claimId: "claim_a",
      now,
      leaseUntil: now + 30_000,
      expiresAt: now + 60_000
    })
    expect(claimed._tag).toBe("Claimed")
    const response = {
      status: 201,
      headers: { "content-type": "application/json" },
      body: new TextEncoder().encode(`{"id":"answer"}`)
    }
    const expiresAt = now + 86_400_000
    const answerOf = (claimId: string): AnswerToStore => ({
      target: { scope, claimId, ttlMillis: 86_400_000 },
      response,
      expiresAt,
      complete: keys.complete(scope, claimId, response, expiresAt)
    })
    const completed = { scope, fingerprint: "f", createdAt: now, expiresAt, state: "completed" as const, response }
    return { scope, answerOf, completed }
  })
