/**
 * The token bucket: the rate-limit rule (CONTRACT §1, §7, §9). Pure functions of (bucket, options,
 * now); the limiters (`rate-limit/in-process-rate-limiter.ts`, `sql-rate-limiter.ts`) keep buckets
 * and ask these functions what to answer.
 *
 * The SQL limiter cannot ask in the middle of its one statement, so the database function
 * `rate_limit_take_up_to` performs the same arithmetic on the same parameters (`bucketCapacity`,
 * `refillPerMs`): refill as `tokens + elapsed ms × per ms`, capped at the capacity; when
 * `tokens + EPSILON ≥ 1`, take `min(count, floor(tokens + EPSILON))` tokens; a denied take
 * writes nothing. With the same operations in
 * the same order, both give the same doubles, and a property test runs them side by side on
 * random sequences (test/rate-limit/rate-limit-take.test.ts).
 */

/** State of one bucket: tokens left (fractional while refilling) as of `updatedAt` (Unix ms). */
export interface TokenBucket {
  readonly tokens: number
  readonly updatedAt: number
}

export interface BucketOptions {
  /** Burst size: the most requests allowed at once; at least 1. */
  readonly capacity: number
  /** Sustained rate: tokens added per second; must be positive. */
  readonly refillPerSecond: number
}

export interface Availability {
  readonly allowed: boolean
  /** 0 when allowed; else whole seconds until a token is available (at least 1), for `Retry-After`. */
  readonly retryAfterSeconds: number
}

export interface TakeResult extends Availability {
  /** The bucket after the take; a denied take leaves it as it was. */
  readonly state: TokenBucket
}

/** Upper bound of `retryAfterSeconds`, also used when the refill rate is not positive. */
export const MAX_RETRY_AFTER_SECONDS = 86_400

/** Absorbs floating-point drift of fractional refill rates (e.g. 20 s × 1/30 per second). */
export const EPSILON = 1e-9

/** The capacity in effect: at least one token. */
export const bucketCapacity = (options: BucketOptions): number => Math.max(1, options.capacity)

/** Tokens added per millisecond (0 for a non-positive rate). */
export const refillPerMs = (options: BucketOptions): number => Math.max(0, options.refillPerSecond) / 1000

/** The bucket refilled up to `now` (a clock going backwards adds nothing). An absent bucket is a full one. */
export const refill = (state: TokenBucket | undefined, options: BucketOptions, now: number): TokenBucket => {
  const capacity = bucketCapacity(options)
  if (state === undefined) return { tokens: capacity, updatedAt: now }
  const elapsedMs = Math.max(0, now - state.updatedAt)
  return {
    tokens: Math.min(capacity, state.tokens + elapsedMs * refillPerMs(options)),
    updatedAt: Math.max(now, state.updatedAt)
  }
}

/**
 * Whether a bucket holding `tokens` (already refilled to now) has one to give, and else the whole
 * seconds until it will (at least 1), for `Retry-After`.
 */
export const availability = (tokens: number, options: BucketOptions): Availability => {
  if (tokens + EPSILON >= 1) return { allowed: true, retryAfterSeconds: 0 }
  const rate = options.refillPerSecond
  const wait = rate > 0 ? Math.ceil((1 - tokens) / rate - EPSILON) : MAX_RETRY_AFTER_SECONDS
  return { allowed: false, retryAfterSeconds: Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, wait)) }
}

/** Whether the bucket has a token at `now`, without taking it. */
export const peek = (state: TokenBucket | undefined, options: BucketOptions, now: number): Availability =>
  availability(refill(state, options, now).tokens, options)

/** What a take of several tokens answers: as `take`, with how many it took. */
export interface TakeUpToResult extends TakeResult {
  /** 0 when denied; else between 1 and the count asked. */
  readonly taken: number
}

/**
 * Takes up to `count` (at least 1) whole tokens, as many as there are, if there is one. An
 * absent bucket is a full one. With a count of 1 this is `take`.
 */
export const takeUpTo = (
  state: TokenBucket | undefined,
  options: BucketOptions,
  now: number,
  count: number
): TakeUpToResult => {
  const current = refill(state, options, now)
  const { allowed, retryAfterSeconds } = availability(current.tokens, options)
  if (!allowed) return { allowed, retryAfterSeconds, taken: 0, state: state ?? current }
  const taken = Math.min(count, Math.floor(current.tokens + EPSILON))
  return {
    allowed,
    retryAfterSeconds,
    taken,
    state: { tokens: Math.max(0, current.tokens - taken), updatedAt: current.updatedAt }
  }
}

/** Takes one token if there is one. An absent bucket is a full one. */
export const take = (state: TokenBucket | undefined, options: BucketOptions, now: number): TakeResult =>
  takeUpTo(state, options, now, 1)

/** Whether the bucket would be full at `now` (then it can be forgotten without changing anything). */
export const isFull = (state: TokenBucket, options: BucketOptions, now: number): boolean =>
  refill(state, options, now).tokens + EPSILON >= bucketCapacity(options)
