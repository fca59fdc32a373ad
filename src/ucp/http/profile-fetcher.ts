/**
 * `ProfileFetcher` over `profile-request.ts`, with the cache the spec's fixed discovery footprint asks
 * for: a bounded LRU of results by URL (profiles for their `Cache-Control` lifetime within [60 s,
 * 24 h], failures for a doubling backoff), one request per URL however many callers wait for it, and
 * forced refreshes at most once per 60 s per origin. Times come from Effect's `Clock`. A fetch runs
 * in the layer's scope, not the caller's: a caller giving up does not cancel it for the others.
 */
import { Cause, Clock, Deferred, Duration, Effect, Either, Exit, Layer, Option, type Scope } from "effect"
import { type AllowedProfileHost, AppConfig, UCP_PROFILE_DEFAULTS, type UcpConfig } from "../../platform/config.ts"
import { jsonDepthProblem, MAX_JSON_DEPTH } from "../../shared/json-depth.ts"
import { firstFailureAtJsonPath } from "../../shared/schema-failure.ts"
import {
  ProfileFetcher,
  type ProfileFetchError,
  type ProfileFetcherShape,
  type ProfileFetchOptions,
  ProfileMalformed,
  VersionUnsupported
} from "../profile-fetcher.ts"
import {
  DEFAULT_FAILURE_BACKOFF,
  type FailureBackoff,
  failureLifetimeMs,
  PROFILE_TTL_FLOOR_MS,
  profileLifetimeMs
} from "../profile/cache-policy.ts"
import type { PlatformProfile } from "../profile/platform-profile.ts"
import { PROFILE_DECODERS, UCP_VERSIONS, type UcpVersion } from "../wire/ucp/versions.ts"
import { type ProfileAnswer, requestProfile, type Resolver, systemResolver } from "./profile-request.ts"
import { type ProfileTarget, profileTarget } from "./profile-target.ts"

export interface ProfileFetcherOptions {
  /** The protocol versions a profile may declare; default every version this service reads. */
  readonly servedVersions?: ReadonlyArray<UcpVersion>
  /** Hosts allowed over plain http and to private addresses; default none. */
  readonly allowedHosts?: ReadonlyArray<AllowedProfileHost>
  /** Resolution, connection and TLS handshake; default 3 s. */
  readonly connectTimeout?: Duration.DurationInput
  /** The whole fetch; default 5 s. */
  readonly timeout?: Duration.DurationInput
  /** The largest body read; default 256 KiB. */
  readonly maxBytes?: number
  /** Results kept; default 1000. */
  readonly cacheEntries?: number
  readonly failureBackoff?: FailureBackoff
  /** Name resolution; default the system's. */
  readonly resolve?: Resolver
}

/** The fetcher's settings from `UCP_PROFILE_*`. */
export const profileFetcherOptions = (config: UcpConfig): ProfileFetcherOptions => ({
  allowedHosts: config.profileAllowedHosts,
  connectTimeout: Duration.millis(config.profileConnectTimeoutMs),
  timeout: Duration.millis(config.profileTimeoutMs),
  maxBytes: config.profileMaxBytes,
  cacheEntries: config.profileCacheEntries
})

class ProtoKey extends Error {}

/** `__proto__` as a key would turn into a prototype on the way through a decoder; no profile needs it. */
const refuseProtoKeys = (key: string, value: unknown): unknown => {
  if (key === "__proto__") throw new ProtoKey()
  return value
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

const malformed = (target: ProfileTarget, reason: ProfileMalformed["reason"], what: string) =>
  new ProfileMalformed({ reason, message: `The profile at ${target.shown} ${what}` })

/** The answer as a profile of a served version, or why it is not one. */
export const decodeProfile = (
  target: ProfileTarget,
  answer: Pick<ProfileAnswer, "body">,
  served: ReadonlyArray<UcpVersion>
): Either.Either<PlatformProfile, ProfileMalformed | VersionUnsupported> => {
  let json: unknown
  try {
    json = JSON.parse(utf8.decode(answer.body), refuseProtoKeys)
  } catch (error) {
    return Either.left(
      malformed(target, "not_json", error instanceof ProtoKey ? "has a __proto__ key." : "is not UTF-8 JSON.")
    )
  }
  const deep = jsonDepthProblem(json, MAX_JSON_DEPTH)
  if (deep !== undefined) {
    return Either.left(malformed(target, "not_json", `nests deeper than ${MAX_JSON_DEPTH} levels at ${deep}.`))
  }
  const declared = (json as { ucp?: { version?: unknown } } | null)?.ucp?.version
  const newest = served[served.length - 1]!
  if (typeof declared === "string" && !(served as ReadonlyArray<string>).includes(declared)) {
    const shown = /^\d{4}-\d{2}-\d{2}$/.test(declared) ? declared : undefined
    return Either.left(
      new VersionUnsupported({
        version: shown,
        supported: served,
        message: `${shown === undefined ? "The profile's protocol version" : `Protocol version ${shown}`} is not ` +
          `supported. This business supports ${served.length === 1 ? "version" : "versions"} ${served.join(", ")}.`
      })
    )
  }
  // Without a version string the newest schema names what is missing.
  const version = typeof declared === "string" ? (declared as UcpVersion) : newest
  return Either.mapLeft(PROFILE_DECODERS[version](json), (error) => {
    const failure = firstFailureAtJsonPath(error).message
    return malformed(target, "schema", `violates the UCP ${version} profile schema: ${failure.slice(0, 300)}.`)
  })
}

interface Settled {
  readonly exit: Exit.Exit<PlatformProfile, ProfileFetchError>
  readonly expiresAt: number
  /** Failures in a row, this one included; 0 for a profile. */
  readonly failures: number
}

interface Fetched {
  readonly profile: PlatformProfile
  readonly lifetimeMs: number
}

export const makeProfileFetcher = Effect.fnUntraced(function*(
  options: ProfileFetcherOptions = {}
): Effect.fn.Return<ProfileFetcherShape, never, Scope.Scope> {
  const scope = yield* Effect.scope
  const served = options.servedVersions !== undefined && options.servedVersions.length > 0
    ? [...options.servedVersions].sort()
    : [...UCP_VERSIONS]
  const allowedHosts = options.allowedHosts ?? []
  const limits = {
    connectTimeout: Duration.decode(options.connectTimeout ?? Duration.millis(UCP_PROFILE_DEFAULTS.connectTimeoutMs)),
    timeout: Duration.decode(options.timeout ?? Duration.millis(UCP_PROFILE_DEFAULTS.timeoutMs)),
    maxBytes: options.maxBytes ?? UCP_PROFILE_DEFAULTS.maxBytes
  }
  const capacity = Math.max(1, options.cacheEntries ?? UCP_PROFILE_DEFAULTS.cacheEntries)
  const backoff = options.failureBackoff ?? DEFAULT_FAILURE_BACKOFF
  const resolve = options.resolve ?? systemResolver

  // Insertion order is recency: a hit moves its entry to the end, the first entry is evicted first.
  const settled = new Map<string, Settled>()
  const inflight = new Map<string, Deferred.Deferred<PlatformProfile, ProfileFetchError>>()
  // Origin → when a forced refresh was last honoured; bounded like the cache.
  const forcedAt = new Map<string, number>()

  const keep = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key)
    map.set(key, value)
    while (map.size > capacity) map.delete(map.keys().next().value!)
  }

  const fetchUncached = (target: ProfileTarget): Effect.Effect<Fetched, ProfileFetchError> =>
    Effect.flatMap(
      requestProfile(target, limits, resolve),
      (answer) =>
        Either.match(decodeProfile(target, answer, served), {
          onLeft: Effect.fail,
          onRight: (profile) =>
            Effect.succeed({ profile, lifetimeMs: profileLifetimeMs(answer.cacheControl, answer.age) })
        })
    )

  /** Records a finished fetch. A forced refresh that failed leaves a fresh profile in place. */
  const record = (target: ProfileTarget, exit: Exit.Exit<Fetched, ProfileFetchError>, now: number, forced: boolean) => {
    const previous = settled.get(target.key)
    if (Exit.isSuccess(exit)) {
      keep(settled, target.key, {
        exit: Exit.succeed(exit.value.profile),
        expiresAt: now + exit.value.lifetimeMs,
        failures: 0
      })
      return
    }
    // Defects and interruptions are not the profile's doing: nothing is kept for them.
    if (Option.isNone(Cause.failureOption(exit.cause))) return
    if (forced && previous !== undefined && Exit.isSuccess(previous.exit) && now < previous.expiresAt) return
    const failures = (previous?.failures ?? 0) + 1
    keep(settled, target.key, {
      exit: Exit.failCause(exit.cause),
      expiresAt: now + failureLifetimeMs(failures, backoff),
      failures
    })
  }

  const settle = (
    target: ProfileTarget,
    deferred: Deferred.Deferred<PlatformProfile, ProfileFetchError>,
    forced: boolean
  ) =>
    fetchUncached(target).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          record(target, exit, now, forced)
          if (inflight.get(target.key) === deferred) inflight.delete(target.key)
          return Deferred.done(deferred, Exit.map(exit, (fetched) => fetched.profile))
        })
      ),
      Effect.onInterrupt(() =>
        Effect.suspend(() => {
          if (inflight.get(target.key) === deferred) inflight.delete(target.key)
          return Deferred.interrupt(deferred)
        })
      )
    )

  const fetch = Effect.fnUntraced(function*(url: string, fetchOptions?: ProfileFetchOptions) {
    const target = profileTarget(url, allowedHosts)
    if (Either.isLeft(target)) return yield* Effect.fail(target.left)
    const { key, origin } = target.right
    const fiberId = yield* Effect.fiberId
    const now = yield* Clock.currentTimeMillis
    // From here to the fork nothing yields: the look-up and the claim of a fetch are one step.
    const cached = settled.get(key)
    const fresh = cached !== undefined && now < cached.expiresAt ? cached : undefined
    const lastForced = forcedAt.get(origin)
    const forced = fresh !== undefined && fetchOptions?.forceRefresh === true &&
      (lastForced === undefined || now - lastForced >= PROFILE_TTL_FLOOR_MS)
    if (fresh !== undefined && !forced) {
      keep(settled, key, fresh)
      return yield* fresh.exit
    }
    const running = inflight.get(key)
    if (running !== undefined) return yield* Deferred.await(running)
    if (forced) keep(forcedAt, origin, now)
    const deferred = Deferred.unsafeMake<PlatformProfile, ProfileFetchError>(fiberId)
    inflight.set(key, deferred)
    yield* Effect.forkIn(settle(target.right, deferred, forced), scope)
    return yield* Deferred.await(deferred)
  })

  return ProfileFetcher.of({ fetch })
})

/** The fetcher with explicit options (tests, tools). */
export const layerProfileFetcher = (options: ProfileFetcherOptions = {}): Layer.Layer<ProfileFetcher> =>
  Layer.scoped(ProfileFetcher, makeProfileFetcher(options))

/** The fetcher configured by `UCP_PROFILE_*` (`AppConfig.ucp`), for the versions this service reads. */
export const ProfileFetcherLive: Layer.Layer<ProfileFetcher, never, AppConfig> = Layer.scoped(
  ProfileFetcher,
  Effect.flatMap(AppConfig, (config) => makeProfileFetcher(profileFetcherOptions(config.ucp)))
)
