/**
 * One GET of a profile over Node's HTTP client, hardened against the URL's owner. The name is
 * resolved here, every address it resolves to is checked (`network/public-address.ts`) unless the
 * host is allowed, and the connection goes to the first checked address through a `lookup` that
 * answers only it: Node resolves nothing again, so no second answer (DNS rebinding) reaches another
 * address. TLS still verifies the certificate against the name. No redirect is followed; the body is
 * read only when it is 2xx JSON, up to a byte limit checked on `Content-Length` first and counted as
 * it arrives. Deadlines run on Effect's clock: one for resolution, connection and TLS handshake,
 * one for the whole exchange.
 */
import { Deferred, Duration, Effect } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import { type ClientRequest, type IncomingMessage, request as httpRequest, type RequestOptions } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction, Socket } from "node:net"
import { ADDRESS_KIND_WORDS, classifyAddress, isIpLiteral } from "../network/public-address.ts"
import { ProfileMalformed, ProfileUnreachable, type UnreachableReason } from "../profile-fetcher.ts"
import type { ProfileTarget } from "./profile-target.ts"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Name resolution: the system's (`getaddrinfo`, as Node's own lookup), or a test's. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

export interface ProfileRequestLimits {
  readonly connectTimeout: Duration.Duration
  readonly timeout: Duration.Duration
  readonly maxBytes: number
}

/** A 2xx JSON answer's body and the headers its cache lifetime comes from. */
export interface ProfileAnswer {
  readonly body: Buffer
  readonly cacheControl: string | undefined
  readonly age: string | undefined
}

type RequestFailure = ProfileUnreachable | ProfileMalformed

const unreachable = (reason: UnreachableReason, message: string, upstreamStatus?: number) =>
  new ProfileUnreachable(upstreamStatus === undefined ? { reason, message } : { reason, message, upstreamStatus })

/** An error's code (`ECONNREFUSED`, `CERT_HAS_EXPIRED`, …): its message may quote what the peer sent. */
const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) ? code : "connection failed"
}

const firstHeader = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/** `application/json` or a `+json` type; parameters (`charset`) aside. */
export const isJsonMediaType = (contentType: string | undefined): boolean => {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  return type === "application/json" || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type)
}

const resolveChecked = Effect.fnUntraced(function*(target: ProfileTarget, resolve: Resolver) {
  const literal = isIpLiteral(target.hostname)
  const addresses: ReadonlyArray<ResolvedAddress> = literal
    ? [{ address: target.hostname, family: target.hostname.includes(":") ? 6 : 4 }]
    : yield* Effect.tryPromise({
      try: () => resolve(target.hostname),
      catch: () => unreachable("dns", `The profile's host ${target.hostname} did not resolve.`)
    })
  if (addresses.length === 0) {
    return yield* Effect.fail(unreachable("dns", `The profile's host ${target.hostname} did not resolve.`))
  }
  if (!target.allowed) {
    for (const { address } of addresses) {
      const kind = classifyAddress(address) ?? "reserved"
      if (kind !== "public") {
        const subject = literal ? "is" : "resolves to"
        return yield* Effect.fail(
          unreachable(
            "address_refused",
            `The profile's host ${target.hostname} ${subject} ${
              ADDRESS_KIND_WORDS[kind]
            }, which profiles are not fetched from.`
          )
        )
      }
    }
  }
  return addresses[0]!
})

interface OpenRequest {
  readonly request: ClientRequest
  readonly connected: Deferred.Deferred<void, RequestFailure>
  readonly answer: Deferred.Deferred<ProfileAnswer, RequestFailure>
}

/** Sends the GET to `pinned`; the deferreds settle as the exchange goes. The caller destroys the request. */
const open = (
  target: ProfileTarget,
  pinned: ResolvedAddress,
  maxBytes: number,
  connected: Deferred.Deferred<void, RequestFailure>,
  answer: Deferred.Deferred<ProfileAnswer, RequestFailure>
): OpenRequest => {
  const fail = (error: RequestFailure) => {
    Deferred.unsafeDone(connected, Effect.fail(error))
    Deferred.unsafeDone(answer, Effect.fail(error))
  }
  const family = pinned.address.includes(":") ? 6 : 4
  // Every lookup Node makes for this request answers the checked address, and only it.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ address: pinned.address, family }])
    else callback(null, pinned.address, family)
  }
  const options: RequestOptions & { servername?: string } = {
    hostname: target.hostname,
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    method: "GET",
    headers: { accept: "application/json", "accept-encoding": "identity", "user-agent": "ucp-profile-fetcher" },
    agent: false,
    lookup
  }
  // SNI and the certificate check use the name; an IP literal has none to send.
  if (target.secure && !isIpLiteral(target.hostname)) options.servername = target.hostname
  const request = (target.secure ? httpsRequest : httpRequest)(options)
  request.on("socket", (socket: Socket) => {
    socket.once(target.secure ? "secureConnect" : "connect", () => Deferred.unsafeDone(connected, Effect.void))
  })
  request.on(
    "error",
    (error) => fail(unreachable("network", `The profile at ${target.shown} could not be fetched (${codeOf(error)}).`))
  )
  request.on("response", (response: IncomingMessage) => {
    const status = response.statusCode ?? 0
    if (status >= 300 && status < 400) {
      request.destroy()
      return fail(
        unreachable("redirect", `The profile at ${target.shown} redirects (${status}); profiles must not.`, status)
      )
    }
    if (status < 200 || status >= 300) {
      request.destroy()
      return fail(unreachable("status", `The profile at ${target.shown} answered ${status}.`, status))
    }
    if (!isJsonMediaType(firstHeader(response.headers["content-type"]))) {
      request.destroy()
      return fail(
        new ProfileMalformed({
          reason: "content_type",
          message: `The profile at ${target.shown} is not served as JSON.`
        })
      )
    }
    const tooLarge = () => unreachable("too_large", `The profile at ${target.shown} is larger than ${maxBytes} bytes.`)
    const declared = firstHeader(response.headers["content-length"])
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
      request.destroy()
      return fail(tooLarge())
    }
    const chunks: Array<Buffer> = []
    let size = 0
    response.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        request.destroy()
        fail(tooLarge())
      } else {
        chunks.push(chunk)
      }
    })
    const brokeOff = () => fail(unreachable("network", `The profile at ${target.shown} broke off.`))
    response.on("error", brokeOff)
    response.on("close", () => {
      if (!response.complete) brokeOff()
    })
    response.on("end", () => {
      if (size > maxBytes) return
      Deferred.unsafeDone(
        answer,
        Effect.succeed({
          body: Buffer.concat(chunks),
          cacheControl: firstHeader(response.headers["cache-control"]),
          age: firstHeader(response.headers["age"])
        })
      )
    })
  })
  request.end()
  return { request, connected, answer }
}

const connectPhase = Effect.fnUntraced(function*(
  target: ProfileTarget,
  resolve: Resolver,
  maxBytes: number
) {
  const pinned = yield* resolveChecked(target, resolve)
  const connected = yield* Deferred.make<void, RequestFailure>()
  const answer = yield* Deferred.make<ProfileAnswer, RequestFailure>()
  const opened = yield* Effect.acquireRelease(
    Effect.sync(() => open(target, pinned, maxBytes, connected, answer)),
    ({ request }) => Effect.sync(() => request.destroy())
  )
  yield* Deferred.await(opened.connected)
  return opened
})

const exchange = Effect.fnUntraced(function*(target: ProfileTarget, limits: ProfileRequestLimits, resolve: Resolver) {
  const opened = yield* connectPhase(target, resolve, limits.maxBytes).pipe(
    Effect.timeoutFail({
      duration: limits.connectTimeout,
      onTimeout: () =>
        unreachable(
          "connect_timeout",
          `No connection to the profile's host ${target.hostname} within ${Duration.format(limits.connectTimeout)}.`
        )
    })
  )
  return yield* Deferred.await(opened.answer)
})

/** The profile's answer, or why there is none; the connection is closed when this ends, however it ends. */
export const requestProfile = (
  target: ProfileTarget,
  limits: ProfileRequestLimits,
  resolve: Resolver
): Effect.Effect<ProfileAnswer, RequestFailure> =>
  exchange(target, limits, resolve).pipe(
    Effect.scoped,
    Effect.timeoutFail({
      duration: limits.timeout,
      onTimeout: () =>
        unreachable(
          "timeout",
          `The profile at ${target.shown} was not received within ${Duration.format(limits.timeout)}.`
        )
    })
  )
