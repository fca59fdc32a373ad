/**
 * How a call to an agent-hosted Feed API fails, split by what a caller does next: retry later
 * (`retriable`: no answer in time, no connection, 408, 409 in flight, 425, 429, 5xx) or fix the request
 * (every other refusal, a payload we would not send, an answer that is not the Feed API's).
 */
import { Data, Effect, type Schedule } from "effect"

/** No usable answer now; the same request may succeed later (after `retryAfterSeconds` when given). */
export class FeedApiUnavailable extends Data.TaggedError("FeedApiUnavailable")<{
  readonly reason: "timeout" | "transport" | "status"
  readonly status: number | undefined
  readonly code: string | undefined
  readonly retryAfterSeconds: number | undefined
  readonly message: string
}> {
  readonly retriable = true as const
}

/** The Feed API refused the request (4xx); sending it again unchanged gets the same answer. */
export class FeedApiRejected extends Data.TaggedError("FeedApiRejected")<{
  readonly status: number
  readonly code: string | undefined
  /** The JSONPath (or field name) the Feed API named. */
  readonly param: string | undefined
  readonly message: string
}> {
  readonly retriable = false as const
}

/** A payload this client will not send: it fails the 2026-04-17 schema at `param`. */
export class FeedPayloadInvalid extends Data.TaggedError("FeedPayloadInvalid")<{
  readonly param: string
  readonly message: string
}> {
  readonly retriable = false as const
}

/** A success status whose body is not the Feed API's answer (a wrong URL, a proxy's page). */
export class FeedApiInvalidResponse extends Data.TaggedError("FeedApiInvalidResponse")<{
  readonly status: number
  readonly message: string
}> {
  readonly retriable = false as const
}

export type FeedApiError = FeedApiUnavailable | FeedApiRejected | FeedPayloadInvalid | FeedApiInvalidResponse

/** Statuses whose request may succeed if sent again later. */
export const isRetriableStatus = (status: number): boolean =>
  status === 408 || status === 425 || status === 429 || status >= 500

/** Retries `effect` on `schedule` while its failure is retriable; any other failure ends it at once. */
export const retryWhileRetriable =
  <Out, R2>(schedule: Schedule.Schedule<Out, FeedApiError, R2>) =>
  <A, R>(effect: Effect.Effect<A, FeedApiError, R>): Effect.Effect<A, FeedApiError, R | R2> =>
    Effect.retry(effect, { schedule, while: (error) => error.retriable })
