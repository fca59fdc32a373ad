/** The token bucket (CONTRACT §1, §7, §9); `rate_limit_take_up_to` does the same operations in the same order. */

/** State of one bucket: tokens left (fractional while refilling) as of `updatedAt` (Unix ms). */
export interface TokenBucket {
  readonly tokens: number
  readonly updatedAt: number
}

export interface BucketOptions {
  readonly capacity: number
  readonly refillPerSecond: number
}

export interface Availability {
  readonly allowed: boolean
  /** 0 when allowed; else whole seconds until a token is available (at least 1), for `Retry-After`. */
  readonly retryAfterSeconds: number
}

export interface TakeResult extends Availability {
  readonly state: TokenBucket
}

/** Upper bound of `retryAfterSeconds`, also used when the refill rate is not positive. */
export const MAX_RETRY_AFTER_SECONDS = 86_400

/** Absorbs floating-point drift of fractional refill rates (e.g. 20 s × 1/30 per second). */
export const EPSILON = 1e-9

export const bucketCapacity = (options: BucketOptions): number => Math.max(1, options.capacity)

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

export const availability = (tokens: number, options: BucketOptions): Availability => {
  if (tokens + EPSILON >= 1) return { allowed: true, retryAfterSeconds: 0 }
  const rate = options.refillPerSecond
  const wait = rate > 0 ? Math.ceil((1 - tokens) / rate - EPSILON) : MAX_RETRY_AFTER_SECONDS
  return { allowed: false, retryAfterSeconds: Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, wait)) }
}

export const peek = (state: TokenBucket | undefined, options: BucketOptions, now: number): Availability =>
  availability(refill(state, options, now).tokens, options)

export interface TakeUpToResult extends TakeResult {
  readonly taken: number
}

/** Takes up to `count` whole tokens, as many as there are, if there is one. An absent bucket is a full one. */
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

export const take = (state: TokenBucket | undefined, options: BucketOptions, now: number): TakeResult =>
  takeUpTo(state, options, now, 1)

/** Whether the bucket would be full at `now` (then it can be forgotten without changing anything). */
export const isFull = (state: TokenBucket, options: BucketOptions, now: number): boolean =>
  refill(state, options, now).tokens + EPSILON >= bucketCapacity(options)
