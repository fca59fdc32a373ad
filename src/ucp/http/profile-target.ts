/**
 * A profile URL checked before anything is sent: absolute, http(s), no credentials, https unless its
 * host is allowed (`UCP_PROFILE_ALLOWED_HOSTS`). The cache key is the URL's normal form without its
 * fragment, so spellings of one URL share an entry.
 */
import { Either } from "effect"
import type { AllowedProfileHost } from "../../platform/config.ts"
import { InvalidProfileUrl } from "../profile-fetcher.ts"

/** Longer profile URLs are refused unparsed: a header's worth, far above any real one. */
export const MAX_PROFILE_URL_LENGTH = 2048

export interface ProfileTarget {
  /** The URL fetched: the normal form, without fragment. */
  readonly url: URL
  readonly key: string
  /** `scheme://host:port`: force-refreshes are counted per origin. */
  readonly origin: string
  readonly secure: boolean
  /** Lower case; an IPv6 address without brackets. */
  readonly hostname: string
  readonly port: number
  /** In `UCP_PROFILE_ALLOWED_HOSTS`: plain http and any address allowed. */
  readonly allowed: boolean
  /** The URL as messages name it: no credentials (there are none), query or fragment; bounded. */
  readonly shown: string
}

const invalid = (message: string) => Either.left(new InvalidProfileUrl({ message }))

export const isAllowedHost = (
  allowed: ReadonlyArray<AllowedProfileHost>,
  hostname: string,
  port: number
): boolean => allowed.some((entry) => entry.host === hostname && (entry.port === undefined || entry.port === port))

export const profileTarget = (
  raw: string,
  allowedHosts: ReadonlyArray<AllowedProfileHost>
): Either.Either<ProfileTarget, InvalidProfileUrl> => {
  if (raw.length > MAX_PROFILE_URL_LENGTH) {
    return invalid(`The profile URL is longer than ${MAX_PROFILE_URL_LENGTH} characters.`)
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return invalid("The profile URL is not an absolute URL.")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return invalid("The profile URL must be an https URL.")
  // Named nowhere: the URL would carry them into messages and logs.
  if (url.username !== "" || url.password !== "") return invalid("The profile URL must not carry credentials.")
  if (url.hostname === "") return invalid("The profile URL has no host.")
  url.hash = ""
  const secure = url.protocol === "https:"
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, "")
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port)
  const allowed = isAllowedHost(allowedHosts, hostname, port)
  const shown = `${url.protocol}//${url.host}${url.pathname}`.slice(0, 200)
  if (!secure && !allowed) return invalid(`The profile URL ${shown} must be an https URL.`)
  return Either.right({ url, key: url.href, origin: url.origin, secure, hostname, port, allowed, shown })
}
