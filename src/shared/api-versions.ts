/** The ACP versions served, oldest first: each API's `Record<ApiVersionName, …>` of wire codecs covers them all. */
export const API_VERSION_NAMES = ["2025-09-29", "2026-01-30", "2026-04-17"] as const

export type ApiVersionName = typeof API_VERSION_NAMES[number]

/** The newest version served: the default of `WEBHOOK_API_VERSION` and of `/openapi.json`. */
export const NEWEST_API_VERSION: ApiVersionName = API_VERSION_NAMES[API_VERSION_NAMES.length - 1]!

export const isApiVersionName = (value: string): value is ApiVersionName =>
  (API_VERSION_NAMES as ReadonlyArray<string>).includes(value)

/** Whether `version` is `since` or newer (dates compare as strings). */
export const isAtLeast = (version: ApiVersionName, since: ApiVersionName): boolean => version >= since
