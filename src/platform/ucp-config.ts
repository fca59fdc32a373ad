/** The UCP platform-profile fetcher's settings (`docs/ucp-profiles.md`), read from the environment. */
import { Config } from "effect"

/** A host whose profiles may be fetched over plain http and from any address (tests, private deployments). */
export interface AllowedProfileHost {
  /** Lower case; an IPv6 address without its brackets. */
  readonly host: string
  /** Only this port when set; any port when not. */
  readonly port: number | undefined
}

export interface UcpConfig {
  /** `UCP_PROFILE_ALLOWED_HOSTS`: comma-separated `host` or `host:port` (an IPv6 address in brackets). */
  readonly profileAllowedHosts: ReadonlyArray<AllowedProfileHost>
  /** `UCP_PROFILE_CONNECT_TIMEOUT_MS`: name resolution, connection and TLS handshake. */
  readonly profileConnectTimeoutMs: number
  /** `UCP_PROFILE_TIMEOUT_MS`: the whole fetch, to the body's last byte. */
  readonly profileTimeoutMs: number
  /** `UCP_PROFILE_MAX_BYTES`: the largest profile body read. */
  readonly profileMaxBytes: number
  /** `UCP_PROFILE_CACHE_ENTRIES`: profiles (and failures) kept, the least recently used dropped first. */
  readonly profileCacheEntries: number
}

export const UCP_PROFILE_DEFAULTS = {
  connectTimeoutMs: 3_000,
  timeoutMs: 5_000,
  maxBytes: 256 * 1024,
  cacheEntries: 1_000
} as const

const entryPattern = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?))(?::(\d{1,5}))?$/

/** One `UCP_PROFILE_ALLOWED_HOSTS` entry, or undefined when it is not `host`, `host:port` or `[ipv6]:port`. */
export const parseAllowedProfileHost = (entry: string): AllowedProfileHost | undefined => {
  const match = entryPattern.exec(entry.trim())
  if (match === null) return undefined
  const port = match[3] === undefined ? undefined : Number(match[3])
  if (port !== undefined && (port < 1 || port > 65535)) return undefined
  let host: string
  try {
    // The URL parser's normal form, as the fetched URL's host is compared in it (`0x7f.1` is `127.0.0.1`).
    host = new URL(`http://${match[1] === undefined ? match[2] : `[${match[1]}]`}/`).hostname.toLowerCase()
  } catch {
    return undefined
  }
  return { host: host.replace(/^\[|\]$/g, ""), port }
}

const splitEntries = (raw: string): Array<string> => raw.split(",").map((s) => s.trim()).filter((s) => s !== "")

const positiveInt = (name: string, fallback: number, max: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `Expected an integer from 1 to ${max}`, validation: (n) => n >= 1 && n <= max }),
    Config.withDefault(fallback)
  )

/** The `UCP_PROFILE_*` variables, each checked as it is read. */
export const ucpConfig: Config.Config<UcpConfig> = Config.all({
  profileAllowedHosts: Config.string("UCP_PROFILE_ALLOWED_HOSTS").pipe(
    Config.validate({
      message: "Expected comma-separated host or host:port entries (an IPv6 address in brackets: [::1]:8443)",
      validation: (raw) => splitEntries(raw).every((entry) => parseAllowedProfileHost(entry) !== undefined)
    }),
    Config.withDefault("")
  ),
  profileConnectTimeoutMs: positiveInt("UCP_PROFILE_CONNECT_TIMEOUT_MS", UCP_PROFILE_DEFAULTS.connectTimeoutMs, 60_000),
  profileTimeoutMs: positiveInt("UCP_PROFILE_TIMEOUT_MS", UCP_PROFILE_DEFAULTS.timeoutMs, 60_000),
  profileMaxBytes: positiveInt("UCP_PROFILE_MAX_BYTES", UCP_PROFILE_DEFAULTS.maxBytes, 16 * 1024 * 1024),
  profileCacheEntries: positiveInt("UCP_PROFILE_CACHE_ENTRIES", UCP_PROFILE_DEFAULTS.cacheEntries, 1_000_000)
}).pipe(
  Config.map((env) => ({
    ...env,
    profileAllowedHosts: splitEntries(env.profileAllowedHosts).map((entry) => parseAllowedProfileHost(entry)!)
  }))
)
