/**
 * The answer of an idempotent request, committed with its effect: both commit or neither does, so a
 * retry after a crash replays it and never repeats the effect (`docs/concurrency.md`, "Idempotency keys").
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Either, FiberRef, Option } from "effect"
import { claimLost } from "../db/functions/idempotency-store-answer.ts"
import type { StorageError } from "../db/storage-error.ts"
import type { IdempotencyScope, StoredResponse } from "./idempotency-store.ts"

export interface RouteAnswer<A, E = unknown> {
  readonly success: (value: A) => HttpServerResponse.HttpServerResponse
  /** The answer to a failure the use case commits with an effect; other failures are answered by the route. */
  readonly failure?: (error: E) => HttpServerResponse.HttpServerResponse
}

export interface CommittedAnswer {
  readonly stored: StoredResponse
  readonly response: HttpServerResponse.HttpServerResponse
}

export interface AnswerTarget {
  readonly scope: IdempotencyScope
  readonly claimId: string
  readonly ttlMillis: number
}

/** An answer to write in its write's atomic step, which fails with `claimLost` (writing nothing) on a lost claim. */
export interface AnswerToStore {
  readonly target: AnswerTarget
  readonly response: StoredResponse
  readonly expiresAt: number
  readonly complete: Effect.Effect<boolean, StorageError>
}

/** The claim of the request being run, set in `CurrentClaim` by the idempotency middleware. */
export class ClaimedRequest {
  answer: RouteAnswer<any, any> | undefined = undefined
  /** Set once the transaction that stored the answer committed. */
  committed: CommittedAnswer | undefined = undefined
  notNow = false
  constructor(
    /** Stores `response` as the claim's result, in the transaction it runs in; false if the claim is lost. */
    readonly complete: (response: StoredResponse) => Effect.Effect<boolean, StorageError>,
    readonly target: AnswerTarget
  ) {}
}

export const CurrentClaim = FiberRef.unsafeMake<ClaimedRequest | undefined>(undefined)

/** Marks the answer "not now" (a 409 with `Retry-After`): the key is released, so a retry with it runs again. */
export const answerIsNotNow: Effect.Effect<void> = Effect.flatMap(
  FiberRef.get(CurrentClaim),
  (claim) =>
    Effect.sync(() => {
      if (claim !== undefined) claim.notNow = true
    })
)

/** Never stored: per-request headers (Content-Language is set outside) and those the transport computes again. */
const unstoredHeaders = new Set([
  "request-id",
  "idempotency-key",
  "idempotent-replayed",
  "content-language",
  "content-length",
  "transfer-encoding",
  "connection",
  "date",
  "set-cookie"
])

/** The response as stored, or undefined when its body cannot be kept (a stream, form data). */
export const toStoredResponse = (response: HttpServerResponse.HttpServerResponse): StoredResponse | undefined => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(response.headers)) {
    if (!unstoredHeaders.has(name.toLowerCase())) headers[name.toLowerCase()] = value
  }
  switch (response.body._tag) {
    case "Uint8Array":
      headers["content-type"] = response.body.contentType
      return { status: response.status, headers, body: response.body.body }
    case "Empty":
      return { status: response.status, headers, body: new Uint8Array(0) }
    default:
      return undefined
  }
}

/** The route's side: answers `effect` with `answer`, or with the response its `commitWithAnswer` stored. */
export const answeredWith =
  <A, F = unknown>(answer: RouteAnswer<A, F>) =>
  <E extends F, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.flatMap(FiberRef.get(CurrentClaim), (claim) => {
      if (claim === undefined) return Effect.map(effect, answer.success)
      claim.answer = answer
      return Effect.map(effect, (value) => claim.committed?.response ?? answer.success(value))
    })

/** The claim was taken over (its lease ran out) before the answer was stored: the effect rolls back. */
export { claimLost }

/**
 * The use case's side: runs its final `write` in `transaction` with the answer to `outcomeOf(result)`
 * (none: nothing to answer). Call it outside any other transaction. `atomicAlone`: with no answer, run as is.
 */
export const commitWithAnswer = <A, E, R>(
  transaction: <A1, E1, R1>(effect: Effect.Effect<A1, E1, R1>) => Effect.Effect<A1, E1 | StorageError, R1>,
  write: Effect.Effect<A, E, R>,
  outcomeOf: (result: A) => Option.Option<Either.Either<unknown, unknown>>,
  atomicAlone = false
): Effect.Effect<A, E | StorageError, R> =>
  Effect.flatMap(FiberRef.get(CurrentClaim), (claim) => {
    const answer = claim?.answer
    if (claim === undefined || answer === undefined) return atomicAlone ? write : transaction(write)
    let answered: CommittedAnswer | undefined
    const storeAnswer = (result: A): Effect.Effect<void, StorageError> => {
      const outcome = outcomeOf(result)
      if (Option.isNone(outcome)) return Effect.void
      const response = Either.isRight(outcome.value)
        ? answer.success(outcome.value.right)
        : answer.failure?.(outcome.value.left)
      const stored = response === undefined ? undefined : toStoredResponse(response)
      if (response === undefined || stored === undefined) return Effect.void
      return Effect.flatMap(claim.complete(stored), (kept) => {
        if (!kept) return Effect.fail(claimLost)
        answered = { stored, response }
        return Effect.void
      })
    }
    return Effect.tap(transaction(Effect.tap(write, storeAnswer)), () => {
      if (answered !== undefined) claim.committed = answered
    })
  })

/** `commitWithAnswer` for a write storing the answer in its own step (rendered first); committed only if it wrote. */
export const writeWithAnswer = (
  write: (answer: AnswerToStore | undefined) => Effect.Effect<boolean, StorageError>,
  outcome: Either.Either<unknown, unknown>
): Effect.Effect<boolean, StorageError> =>
  Effect.flatMap(FiberRef.get(CurrentClaim), (claim) => {
    const answer = claim?.answer
    if (claim === undefined || answer === undefined) return write(undefined)
    const response = Either.isRight(outcome) ? answer.success(outcome.right) : answer.failure?.(outcome.left)
    const stored = response === undefined ? undefined : toStoredResponse(response)
    if (response === undefined || stored === undefined) return write(undefined)
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.tap(
        write({
          target: claim.target,
          response: stored,
          expiresAt: now + claim.target.ttlMillis,
          complete: claim.complete(stored)
        }),
        (written) => {
          if (written) claim.committed = { stored, response }
        }
      ))
  })
