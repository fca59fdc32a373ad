/**
 * The ACP versions this service speaks, oldest first. Each feature keeps one wire codec per
 * version in a `Record<ApiVersionName, …>`, so adding a version here makes the compiler ask every
 * API for its codec; a version is never accepted and answered in another version's format.
 *
 * 2025-12-12 and 2026-01-16 are not served (docs/protocol-versions.md §9): a request naming them
 * gets 400 `unsupported_api_version` with the versions that are.
 */
export const API_VERSION_NAMES = ["2025-09-29", "2026-01-30", "2026-04-17"] as const

export type ApiVersionName = typeof API_VERSION_NAMES[number]

/** The newest version served: the default of `WEBHOOK_API_VERSION` and of `/openapi.json`. */
export const NEWEST_API_VERSION: ApiVersionName = API_VERSION_NAMES[API_VERSION_NAMES.length - 1]!

export const isApiVersionName = (value: string): value is ApiVersionName =>
  (API_VERSION_NAMES as ReadonlyArray<string>).includes(value)

/** Whether `version` is `since` or newer (dates compare as strings). */
export const isAtLeast = (version: ApiVersionName, since: ApiVersionName): boolean => version >= since
