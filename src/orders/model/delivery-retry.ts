/** The order-event sender's retry policy (CONTRACT §8); pure: time and randomness are passed in. */

export const BACKOFF_BASE_MS = 1_000
export const BACKOFF_FACTOR = 2
export const BACKOFF_CAP_MS = 60 * 60 * 1_000

/** Full jitter: `floor(random × min(cap, base × 2^(attempt − 1)))`, `attempt` counting the attempts made. */
export const backoffDelayMs = (attempt: number, random: number): number => {
  const exponent = Math.max(0, Math.floor(attempt) - 1)
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * Math.pow(BACKOFF_FACTOR, Math.min(exponent, 64)))
  const r = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1 - Number.EPSILON) : 0
  return Math.floor(r * ceiling)
}

/** Delta seconds or an HTTP date → ms from `nowMs` (a past date is 0), capped; unparseable → undefined. */
export const parseRetryAfter = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const value = header.trim()
  if (value === "") return undefined
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1_000, BACKOFF_CAP_MS)
  if (!/[A-Za-z]/.test(value)) return undefined
  const date = Date.parse(value)
  if (!Number.isFinite(date)) return undefined
  return Math.min(Math.max(0, date - nowMs), BACKOFF_CAP_MS)
}

export type DeliveryResponse = { readonly status: number } | { readonly networkError: true }

export type DeliveryOutcome = "delivered" | "retry" | "dead_letter"

export interface RetryDecision {
  readonly retry: boolean
  readonly delayMs: number
  readonly outcome: DeliveryOutcome
}

export interface RetryContext {
  /** Uniform in [0, 1): the jitter. */
  readonly random: number
  /** Epoch ms, to resolve a Retry-After HTTP date. */
  readonly nowMs: number
}

export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 429 || (status >= 500 && status <= 599)

/**
 * 2xx → delivered; network error, 408, 429, 5xx → retry after a valid `Retry-After`, else backoff; any
 * other status → dead-letter. The caller dead-letters instead when `isPastHorizon` holds for the retry.
 */
export const retryDecision = (
  response: DeliveryResponse,
  attempt: number,
  retryAfterHeader: string | undefined,
  context: RetryContext
): RetryDecision => {
  if ("status" in response) {
    if (response.status >= 200 && response.status <= 299) return { retry: false, delayMs: 0, outcome: "delivered" }
    if (!isRetryableStatus(response.status)) return { retry: false, delayMs: 0, outcome: "dead_letter" }
    const retryAfter = parseRetryAfter(retryAfterHeader, context.nowMs)
    if (retryAfter !== undefined) return { retry: true, delayMs: retryAfter, outcome: "retry" }
  }
  return { retry: true, delayMs: backoffDelayMs(attempt, context.random), outcome: "retry" }
}

const ms = (t: number | Date): number => (typeof t === "number" ? t : t.getTime())

/** True once more than `horizonMs` has passed since the first attempt (then: dead-letter). */
export const isPastHorizon = (firstAttemptAt: number | Date, now: number | Date, horizonMs: number): boolean =>
  ms(now) - ms(firstAttemptAt) > horizonMs
