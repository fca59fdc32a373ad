/**
 * How long a fetched profile, or a failure to fetch one, is kept. A profile is kept for its
 * `Cache-Control` lifetime within [60 s, 24 h]: the spec's 60 s floor applies whatever the origin says
 * (`no-store`, `no-cache`, `private` and no header included), so a profile is fetched at most once a
 * minute however it is served; the ceiling bounds how long a replaced key stays trusted. Failures are
 * kept for a backoff doubling with each consecutive one, so a failing or hostile profile endpoint
 * costs one fetch per backoff, not one per request.
 */

/** The spec's TTL floor, also the least time between two forced refreshes of one origin. */
export const PROFILE_TTL_FLOOR_MS = 60_000
export const PROFILE_TTL_CEILING_MS = 24 * 60 * 60_000

export interface FailureBackoff {
  /** After the first failure. */
  readonly initialMs: number
  /** The most any one failure is kept. */
  readonly maxMs: number
}

export const DEFAULT_FAILURE_BACKOFF: FailureBackoff = { initialMs: 5_000, maxMs: 5 * 60_000 }

const delta = /^\d{1,12}$/

/**
 * The lifetime a response's headers give it: `max-age` (`s-maxage` first, as this is a cache shared by
 * every request naming the profile) less `Age`, clamped to [floor, ceiling]. `no-store`, `no-cache` and
 * `private` (which profiles must not be served with) count as no lifetime, so the floor, as does a
 * malformed or missing `max-age`. A directive's value may be quoted.
 */
export const profileLifetimeMs = (cacheControl: string | undefined, age: string | undefined): number => {
  const directives = new Map<string, string>()
  for (const part of (cacheControl ?? "").split(",")) {
    const [name, ...rest] = part.split("=")
    const key = name!.trim().toLowerCase()
    if (key !== "" && !directives.has(key)) directives.set(key, rest.join("=").trim().replace(/^"(.*)"$/, "$1"))
  }
  if (directives.has("no-store") || directives.has("no-cache") || directives.has("private")) return clampLifetime(0)
  const declared = directives.get("s-maxage") ?? directives.get("max-age")
  const seconds = declared !== undefined && delta.test(declared) ? Number(declared) : 0
  const aged = age !== undefined && delta.test(age.trim()) ? Number(age.trim()) : 0
  return clampLifetime((seconds - aged) * 1000)
}

export const clampLifetime = (ms: number): number =>
  Math.min(PROFILE_TTL_CEILING_MS, Math.max(PROFILE_TTL_FLOOR_MS, Number.isFinite(ms) ? ms : 0))

/** How long the `consecutive`-th failure in a row (1 for the first) is kept. */
export const failureLifetimeMs = (consecutive: number, backoff: FailureBackoff = DEFAULT_FAILURE_BACKOFF): number => {
  const doublings = Math.min(Math.max(consecutive, 1) - 1, 30)
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** doublings)
}
