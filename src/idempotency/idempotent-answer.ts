/**
 * The answer of an idempotent request, committed in the same transaction as its effect: both
 * commit or neither does, so a retry after a crash at any point replays the first answer and never
 * repeats the effect (`docs/concurrency.md`, "Idempotency keys").
 *
 * Three parties, one mechanism for every idempotent route:
 * - the idempotency middleware, having claimed the request's key, runs the route with a
 *   `ClaimedRequest` in `CurrentClaim`: how to store an answer on that claim;
 * - the route's handler says how it answers what its use case decides (`answeredWith`): the
 *   rendering of the success, and of the failures a use case commits with an effect (a declined
 *   payment is recorded, then answered);
 * - the use case runs its final write through `commitWithAnswer`, which renders the answer to the
 *   write's outcome and stores it on the claim inside the write's transaction.
 *
 * When the answer was committed, the middleware answers with exactly the stored response (the
 * first answer and every replay are the same bytes) and stores nothing more. An answer that no
 * use case committed (a refusal before any write) is stored by the middleware after the route,
 * as before: nothing else was committed, so a crash in between loses nothing.
 *
 * Without a claim (no Idempotency-Key, or a route the middleware does not cover) nothing here
 * costs more than reading a FiberRef, and a write that is atomic alone runs without a transaction.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Either, FiberRef, Option } from "effect"
import { claimLost } from "../db/functions/idempotency-store-answer.ts"
import type { StorageError } from "../db/storage-error.ts"
import type { IdempotencyScope, StoredResponse } from "./idempotency-store.ts"

/** How a route answers what its use case decides. */
export interface RouteAnswer<A, E = unknown> {
  readonly success: (value: A) => HttpServerResponse.HttpServerResponse
  /** The answer to a failure the use case commits with an effect; other failures are answered by the route. */
  readonly failure?: (error: E) => HttpServerResponse.HttpServerResponse
}

/** An answer stored on the claim in a transaction that committed. */
export interface CommittedAnswer {
  readonly stored: StoredResponse
  readonly response: HttpServerResponse.HttpServerResponse
}

/** The claim an answer belongs to: its key's scope, the claim's id, how long an answer is kept. */
export interface AnswerTarget {
  readonly scope: IdempotencyScope
  readonly claimId: string
  readonly ttlMillis: number
}

/**
 * An answer for a store to write in the same atomic step as the write it answers
 * (`writeWithAnswer`): in the write's own statement (`target`, `response`, `expiresAt`, as
 * `IdempotencyStore.complete` stores them), or by running `complete` inside that step. Either way
 * the step fails with `claimLost`, and writes nothing, when the claim is no longer the request's.
 */
export interface AnswerToStore {
  readonly target: AnswerTarget
  readonly response: StoredResponse
  readonly expiresAt: number
  /** Stores the answer on the claim; false if the claim is lost. */
  readonly complete: Effect.Effect<boolean, StorageError>
}

/** The claim of the request being run, set by the idempotency middleware for the route's run. */
export class ClaimedRequest {
  /** Set by the route's handler (`answeredWith`). */
  answer: RouteAnswer<any, any> | undefined = undefined
  /** Set once the transaction that stored the answer committed. */
  committed: CommittedAnswer | undefined = undefined
  /** Set by a handler whose answer is "not now" (`answerIsNotNow`): the key is released, not kept. */
  notNow = false
  constructor(
    /** Stores `response` as the claim's result, in the transaction it runs in; false if the claim is lost. */
    readonly complete: (response: StoredResponse) => Effect.Effect<boolean, StorageError>,
    readonly target: AnswerTarget
  ) {}
}

export const CurrentClaim = FiberRef.unsafeMake<ClaimedRequest | undefined>(undefined)

/**
 * Marks the answer of the request being run as "not now" (a 409 while a payment of the session is
 * in progress, with `Retry-After`): not the answer to the request, so not kept under its key. The
 * protocol has a retry with the same key honour `Retry-After`; kept, the refusal would answer it.
 */
export const answerIsNotNow: Effect.Effect<void> = Effect.flatMap(
  FiberRef.get(CurrentClaim),
  (claim) =>
    Effect.sync(() => {
      if (claim !== undefined) claim.notNow = true
    })
)

/**
 * Headers never stored: per-request ones (Request-Id, the echo, the replay marker, Content-Language
 * which the outer middleware sets) and transport ones the server computes again.
 */
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

/**
 * The route's side: runs the use case `effect` and answers its success with `answer.success`; on a
 * claimed request, the use case's `commitWithAnswer` renders and stores the answer with its effect
 * (the response rendered there is the one returned).
 */
export const answeredWith =
  <A, F = unknown>(answer: RouteAnswer<A, F>) =>
  <E extends F, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.flatMap(FiberRef.get(CurrentClaim), (claim) => {
      if (claim === undefined) return Effect.map(effect, answer.success)
      claim.answer = answer
      return Effect.map(effect, (value) => claim.committed?.response ?? answer.success(value))
    })

/**
 * The claim was taken over (its lease ran out) before the answer was stored: the effect is rolled
 * back. Defined beside `idempotency_store_answer`, whose statements fail with it too.
 */
export { claimLost }

/**
 * The use case's side: runs `write`, its final write, in `transaction` and, on a claimed request,
 * stores in the same transaction the route's answer to `outcomeOf(result)` (none: `write` decided
 * nothing to answer, e.g. a conditional step that wrote nothing). Call it outside any other
 * transaction: the answer counts as committed when this transaction commits. `atomicAlone`: `write`
 * is one atomic store step, run as is when there is no answer to store with it.
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

/**
 * `commitWithAnswer` for a final write that is one atomic store step able to store the answer in
 * that step (`write(answer)`): the answer to `outcome` (the write's outcome when it writes) is
 * rendered before the write and handed to it, so a keyed write costs no transaction and no
 * statement more than an unkeyed one. `write` answers whether it wrote; the answer counts as
 * committed only then. Without a claim, or an answer that cannot be stored, `write(undefined)`.
 */
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
