/**
 * The platform profiles a UCP request names (`UCP-Agent: profile="…"`): fetched, validated against the
 * profile schema of the version the profile declares, and cached (`docs/ucp-profiles.md`). A failure
 * is one of UCP's discovery errors, with the REST status it is answered with; its message names at
 * most the profile's URL without credentials, query or fragment, and never an address a name resolved to.
 */
import { Context, Data, type Effect } from "effect"
import type { PlatformProfile } from "./profile/platform-profile.ts"

/** 400: not an absolute http(s) URL, or plain http to a host not allowed to serve it. Never cached. */
export class InvalidProfileUrl extends Data.TaggedError("InvalidProfileUrl")<{
  readonly message: string
}> {
  readonly code = "invalid_profile_url" as const
  readonly httpStatus = 400 as const
}

export type UnreachableReason =
  /** The name did not resolve. */
  | "dns"
  /** The host is, or resolves to, an address a stranger's URL may not reach (private, loopback, …). */
  | "address_refused"
  /** No connection (and TLS handshake) within the connect timeout. */
  | "connect_timeout"
  /** The whole fetch took longer than its timeout. */
  | "timeout"
  /** The connection was refused, reset or broke off, or TLS failed. */
  | "network"
  /** A 3xx: profiles must not redirect, and none is followed. */
  | "redirect"
  /** Any other status but 2xx. */
  | "status"
  /** A body larger than the limit (by `Content-Length`, or counted as it arrived). */
  | "too_large"

/** 424: the profile could not be fetched. */
export class ProfileUnreachable extends Data.TaggedError("ProfileUnreachable")<{
  readonly message: string
  readonly reason: UnreachableReason
  /** The status the profile's server answered, for `redirect` and `status`. */
  readonly upstreamStatus?: number
}> {
  readonly code = "profile_unreachable" as const
  readonly httpStatus = 424 as const
}

export type MalformedReason =
  /** The answer's `Content-Type` is not JSON. */
  | "content_type"
  /** The body is not UTF-8 JSON (or nests too deep). */
  | "not_json"
  /** JSON that violates the profile schema of its version. */
  | "schema"

/** 422: the fetched content is not a valid profile. */
export class ProfileMalformed extends Data.TaggedError("ProfileMalformed")<{
  readonly message: string
  readonly reason: MalformedReason
}> {
  readonly code = "profile_malformed" as const
  readonly httpStatus = 422 as const
}

/** 422: the profile's `ucp.version` is not a protocol version this service serves. */
export class VersionUnsupported extends Data.TaggedError("VersionUnsupported")<{
  readonly message: string
  /** The profile's version, when it has the `YYYY-MM-DD` form. */
  readonly version: string | undefined
  readonly supported: ReadonlyArray<string>
}> {
  readonly code = "version_unsupported" as const
  readonly httpStatus = 422 as const
}

export type ProfileFetchError = InvalidProfileUrl | ProfileUnreachable | ProfileMalformed | VersionUnsupported

export interface ProfileFetchOptions {
  /**
   * Fetch again even though a profile (or a failure) is cached: for a signature naming a `kid` the
   * cached profile lacks. Honoured at most once per 60 s per origin; otherwise the cached entry answers.
   */
  readonly forceRefresh?: boolean
}

export interface ProfileFetcherShape {
  readonly fetch: (url: string, options?: ProfileFetchOptions) => Effect.Effect<PlatformProfile, ProfileFetchError>
}

export class ProfileFetcher extends Context.Tag("ucp/ProfileFetcher")<ProfileFetcher, ProfileFetcherShape>() {}
