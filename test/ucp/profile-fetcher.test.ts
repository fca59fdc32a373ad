/**
 * The platform-profile fetcher through its port, against profile servers of our own on 127.0.0.1:
 * friendly ones, and hostile ones that answer too much, too slowly, elsewhere (redirects), with
 * something that is not a profile, or a version we do not serve; and URLs naming addresses a
 * stranger may not make us reach. Then the cache: lifetimes on the test clock, failure backoff, one
 * request for concurrent callers, rationed forced refreshes, the LRU bound.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { createSecureContext } from "node:tls"
import { AppConfig } from "../../src/platform/config.ts"
import {
  makeProfileFetcher,
  ProfileFetcherLive,
  type ProfileFetcherOptions
} from "../../src/ucp/http/profile-fetcher.ts"
import type { Resolver } from "../../src/ucp/http/profile-request.ts"
import { ProfileFetcher, type ProfileFetchError } from "../../src/ucp/profile-fetcher.ts"
import { orderWebhookUrl } from "../../src/ucp/profile/platform-profile.ts"
import { testConfig } from "../support/test-config.ts"
import { hasOpenssl, selfSignedCertificate } from "../support/tls-certificate.ts"
import { platformProfile, WEBHOOK_URL } from "./profile-fixtures.ts"
import { eventually, type Handler, json, profileServer } from "./profile-server.ts"

const LOCAL = [{ host: "127.0.0.1", port: undefined }]

/** A fetcher for the test's scope; 127.0.0.1 is allowed unless the options say otherwise. */
const fetcherWith = (options: ProfileFetcherOptions = {}) => makeProfileFetcher({ allowedHosts: LOCAL, ...options })

const failureOf = <A>(effect: Effect.Effect<A, ProfileFetchError>) => Effect.flip(effect)

const realPause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Answers from a handler the test can swap. */
const switchable = (first: Handler) => {
  let current = first
  return { handler: ((request, response) => current(request, response)) as Handler, set: (h: Handler) => (current = h) }
}

describe("a friendly profile server", () => {
  it.scoped("the profile is fetched, decoded, and names where order webhooks go", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      const fetcher = yield* fetcherWith()
      const profile = yield* fetcher.fetch(`${server.origin}/profiles/agent.json`)
      expect(profile.ucp.version).toBe("2026-04-08")
      expect(Object.keys(profile.ucp.capabilities)).toContain("dev.ucp.shopping.checkout")
      expect(orderWebhookUrl(profile)).toEqual(Option.some(WEBHOOK_URL))
      expect(profile.signing_keys[0]).toMatchObject({ kid: "platform_2026", kty: "EC", crv: "P-256" })
      expect(server.requests).toHaveLength(1)
      expect(server.requests[0]!.path).toBe("/profiles/agent.json")
      expect(server.requests[0]!.headers.host).toBe(`127.0.0.1:${server.port}`)
      expect(server.requests[0]!.headers.accept).toBe("application/json")
    }))

  it.scoped("an allowed name is resolved once, by us, and connected to at the address checked; Host keeps the name", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      const asked: Array<string> = []
      const resolve: Resolver = async (hostname) => {
        asked.push(hostname)
        return [{ address: "127.0.0.1", family: 4 }]
      }
      const fetcher = yield* fetcherWith({ allowedHosts: [{ host: "profiles.test", port: server.port }], resolve })
      yield* fetcher.fetch(`http://profiles.test:${server.port}/p.json`)
      expect(asked).toEqual(["profiles.test"])
      expect(server.requests[0]!.headers.host).toBe(`profiles.test:${server.port}`)
    }))

  it.scoped("a +json media type with a charset is JSON too", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(
        json(platformProfile(), { "content-type": "application/profile+json; charset=utf-8" })
      )
      const fetcher = yield* fetcherWith()
      expect((yield* fetcher.fetch(`${server.origin}/p`)).ucp.version).toBe("2026-04-08")
    }))

  it.scoped("ProfileFetcherLive reads UCP_PROFILE_* from AppConfig", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      const fetcher = yield* ProfileFetcher
      expect((yield* fetcher.fetch(`${server.origin}/p`)).ucp.version).toBe("2026-04-08")
      const refused = yield* failureOf(fetcher.fetch(`http://localhost:${server.port}/p`))
      expect(refused._tag).toBe("InvalidProfileUrl")
    }).pipe(
      Effect.provide(ProfileFetcherLive.pipe(Layer.provide(Layer.succeed(
        AppConfig,
        testConfig({
          ucp: {
            ...testConfig().ucp,
            profileAllowedHosts: [{ host: "127.0.0.1", port: undefined }]
          }
        })
      ))))
    ))
})

describe("URLs refused before anything is sent: invalid_profile_url (400)", () => {
  it.scoped("malformed, relative, not http(s), with credentials, or too long", () =>
    Effect.gen(function*() {
      const fetcher = yield* fetcherWith()
      for (
        const url of [
          "not a url",
          "/profiles/agent.json",
          "//platform.example/profile.json",
          "ftp://platform.example/profile.json",
          "file:///etc/passwd",
          "https://user:hunter2@platform.example/profile.json",
          `https://platform.example/${"a".repeat(2100)}`
        ]
      ) {
        const error = yield* failureOf(fetcher.fetch(url))
        expect(error, url).toMatchObject({ _tag: "InvalidProfileUrl", code: "invalid_profile_url", httpStatus: 400 })
        expect(error.message).not.toContain("hunter2")
      }
    }))

  it.scoped("plain http to a host not allowed (or allowed on another port), and nothing connects", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      for (
        const allowedHosts of [[], [{ host: "127.0.0.1", port: server.port + 1 }], [{
          host: "localhost",
          port: undefined
        }]]
      ) {
        const fetcher = yield* fetcherWith({ allowedHosts })
        const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
        expect(error).toMatchObject({ _tag: "InvalidProfileUrl" })
        expect(error.message).toContain("https")
      }
      expect(server.connections()).toBe(0)
      // The same host allowed on its port is fetched.
      const allowed = yield* fetcherWith({ allowedHosts: [{ host: "127.0.0.1", port: server.port }] })
      yield* allowed.fetch(`${server.origin}/p`)
      expect(server.hits()).toBe(1)
    }))
})

describe("addresses a stranger's URL may not reach: profile_unreachable (424), refused before connecting", () => {
  it.scoped("loopback by IP, by name and in IPv6, when the host is not allowed", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      const fetcher = yield* fetcherWith({ allowedHosts: [] })
      for (
        const url of [
          `https://127.0.0.1:${server.port}/p`,
          `https://localhost:${server.port}/p`,
          `https://[::1]:${server.port}/p`,
          `https://[::ffff:127.0.0.1]:${server.port}/p`,
          `https://2130706433:${server.port}/p`
        ]
      ) {
        const error = yield* failureOf(fetcher.fetch(url))
        expect(error, url).toMatchObject({
          _tag: "ProfileUnreachable",
          reason: "address_refused",
          code: "profile_unreachable",
          httpStatus: 424
        })
        expect(error.message, url).toContain("loopback")
      }
      expect(server.connections()).toBe(0)
    }))

  it.scoped("a name's resolution is not named in the message", () =>
    Effect.gen(function*() {
      const fetcher = yield* fetcherWith({ allowedHosts: [] })
      const error = yield* failureOf(fetcher.fetch("https://localhost/p"))
      expect(error.message).toContain("localhost")
      expect(error.message).not.toMatch(/127\.0\.0\.1|::1/)
    }))

  it.scoped("private, link-local (cloud metadata), CGNAT, unique-local, unspecified, documentation literals", () =>
    Effect.gen(function*() {
      const fetcher = yield* fetcherWith({ allowedHosts: [] })
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["https://10.0.0.1/p", "private"],
        ["https://192.168.1.1/p", "private"],
        ["https://172.16.0.1/p", "private"],
        ["https://169.254.169.254/latest/meta-data/", "link-local"],
        ["https://100.64.0.1/p", "CGNAT"],
        ["https://[fd00::1]/p", "unique-local"],
        ["https://[fe80::1]/p", "link-local"],
        ["https://0.0.0.0/p", "unspecified"],
        ["https://192.0.2.1/p", "documentation"],
        ["https://198.18.0.1/p", "benchmarking"],
        ["https://224.0.0.1/p", "multicast"],
        ["https://[::ffff:a9fe:a9fe]/p", "link-local"]
      ]
      for (const [url, words] of cases) {
        const error = yield* failureOf(fetcher.fetch(url))
        expect(error, url).toMatchObject({ _tag: "ProfileUnreachable", reason: "address_refused" })
        expect(error.message, url).toContain(words)
      }
    }))

  it.scoped("every address a name resolves to is checked: one private among public ones refuses", () =>
    Effect.gen(function*() {
      const answers: Record<string, ReadonlyArray<{ address: string; family: number }>> = {
        "mixed.example": [{ address: "93.184.215.14", family: 4 }, { address: "10.1.2.3", family: 4 }],
        "mapped.example": [{ address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 }, {
          address: "::ffff:169.254.169.254",
          family: 6
        }],
        "nat64.example": [{ address: "64:ff9b::7f00:1", family: 6 }]
      }
      const fetcher = yield* fetcherWith({ allowedHosts: [], resolve: async (host) => answers[host]! })
      for (const host of Object.keys(answers)) {
        const error = yield* failureOf(fetcher.fetch(`https://${host}/p`))
        expect(error, host).toMatchObject({ _tag: "ProfileUnreachable", reason: "address_refused" })
      }
    }))

  it.scoped("a name that does not resolve: reason dns", () =>
    Effect.gen(function*() {
      const fetcher = yield* fetcherWith({
        resolve: () => Promise.reject(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }))
      })
      const error = yield* failureOf(fetcher.fetch("https://nowhere.example/p"))
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "dns" })
      const empty = yield* fetcherWith({ resolve: async () => [] })
      expect(yield* failureOf(empty.fetch("https://nowhere.example/p"))).toMatchObject({ reason: "dns" })
    }))
})

describe("hostile profile servers: profile_unreachable (424)", () => {
  it.scoped("a body over the limit by Content-Length is refused unread", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(" ".repeat(4096)))
      const fetcher = yield* fetcherWith({ maxBytes: 1024 })
      const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "too_large" })
      expect(error.message).toContain("1024 bytes")
    }))

  it.scoped("Content-Length is checked before any byte of the body: a declared 10 MB refuses at once", () =>
    Effect.gen(function*() {
      let closed = false
      const server = yield* profileServer((_, response) => {
        response.writeHead(200, { "content-type": "application/json", "content-length": 10_000_000 })
        response.flushHeaders()
        response.on("close", () => (closed = true))
      })
      // No deadline could end it on the test clock: only the declared length can.
      const fetcher = yield* fetcherWith({ maxBytes: 1024 })
      const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "too_large" })
      yield* eventually(() => closed)
    }))

  it.scoped("a chunked body with no Content-Length is cut off once past the limit", () =>
    Effect.gen(function*() {
      let written = 0
      let closed = false
      const server = yield* profileServer((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.on("close", () => (closed = true))
        const chunk = Buffer.alloc(1024, 0x20)
        const pump = () => {
          if (closed || written > 64 * 1024 * 1024) return
          written += chunk.length
          if (response.write(chunk)) setImmediate(pump)
          else response.once("drain", pump)
        }
        pump()
      })
      const fetcher = yield* fetcherWith({ maxBytes: 16 * 1024 })
      const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "too_large" })
      yield* eventually(() => closed)
      // The connection was dropped: the server could write little more than socket buffers hold.
      expect(written).toBeLessThan(8 * 1024 * 1024)
    }))

  it.scopedLive("a profile dripped byte by byte past the timeout", () =>
    Effect.gen(function*() {
      let closed = false
      const server = yield* profileServer((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write("{")
        const drip = setInterval(() => response.write(" "), 50)
        response.on("close", () => {
          closed = true
          clearInterval(drip)
        })
      })
      const fetcher = yield* fetcherWith({ timeout: "400 millis" })
      const started = Date.now()
      const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
      const elapsed = Date.now() - started
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "timeout" })
      expect(elapsed).toBeGreaterThanOrEqual(350)
      expect(elapsed).toBeLessThan(3_000)
      yield* eventually(() => closed)
    }))

  it.scoped("no answer at all: the timeout on the test clock", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(() => {})
      const fetcher = yield* fetcherWith({ timeout: "5 seconds", connectTimeout: "30 seconds" })
      const fetching = yield* Effect.fork(failureOf(fetcher.fetch(`${server.origin}/p`)))
      yield* eventually(() => server.hits() === 1)
      yield* TestClock.adjust("4 seconds")
      expect(Option.isNone(yield* Fiber.poll(fetching))).toBe(true)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fetching)).toMatchObject({ _tag: "ProfileUnreachable", reason: "timeout" })
    }))

  it.scoped("no connection within the connect timeout (a resolution that never ends)", () =>
    Effect.gen(function*() {
      let asked = false
      const resolve: Resolver = () => {
        asked = true
        return new Promise(() => {})
      }
      const fetcher = yield* fetcherWith({ connectTimeout: "3 seconds", resolve })
      const fetching = yield* Effect.fork(failureOf(fetcher.fetch("https://stuck.example/p")))
      yield* eventually(() => asked)
      yield* realPause(20)
      yield* TestClock.adjust("2999 millis")
      expect(Option.isNone(yield* Fiber.poll(fetching))).toBe(true)
      yield* TestClock.adjust("1 milli")
      expect(yield* Fiber.join(fetching)).toMatchObject({ _tag: "ProfileUnreachable", reason: "connect_timeout" })
    }))

  it.scoped("redirects (301, 302, 307, 308) are never followed: the target is never hit", () =>
    Effect.gen(function*() {
      const target = yield* profileServer(json(platformProfile()))
      for (const status of [301, 302, 303, 307, 308]) {
        const server = yield* profileServer((_, response) => {
          response.writeHead(status, { location: `${target.origin}/profile.json` })
          response.end()
        })
        const fetcher = yield* fetcherWith()
        const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
        expect(error, String(status)).toMatchObject({
          _tag: "ProfileUnreachable",
          reason: "redirect",
          upstreamStatus: status
        })
        expect(server.hits()).toBe(1)
      }
      expect(target.connections()).toBe(0)
    }))

  it.scoped("any other status but 2xx", () =>
    Effect.gen(function*() {
      for (const status of [404, 500, 503]) {
        const server = yield* profileServer(json({ error: "nope" }, {}, status))
        const fetcher = yield* fetcherWith()
        const error = yield* failureOf(fetcher.fetch(`${server.origin}/p`))
        expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "status", upstreamStatus: status })
        expect(error.message).toContain(String(status))
      }
    }))

  it.scoped("a refused connection", () =>
    Effect.gen(function*() {
      const fetcher = yield* fetcherWith()
      const error = yield* failureOf(fetcher.fetch("http://127.0.0.1:9/p"))
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "network" })
      expect(error.message).toContain("ECONNREFUSED")
    }))

  it.scoped.skipIf(!hasOpenssl)(
    "https: the certificate is verified against the name, sent as SNI",
    () =>
      Effect.gen(function*() {
        const { cert, keyFile } = yield* selfSignedCertificate
        const context = createSecureContext({ cert, key: readFileSync(keyFile) })
        const names: Array<string> = []
        let requests = 0
        const server = yield* Effect.acquireRelease(
          Effect.async<ReturnType<typeof createHttpsServer>>((resume) => {
            const created = createHttpsServer({
              SNICallback: (name, done) => {
                names.push(name)
                done(null, context)
              }
            }, (_, response) => {
              requests++
              json(platformProfile())(_, response)
            })
            created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
          }),
          (created) =>
            Effect.async<void>((resume) => {
              created.close(() => resume(Effect.void))
            })
        )
        const port = (server.address() as AddressInfo).port
        const fetcher = yield* fetcherWith({
          allowedHosts: [{ host: "localhost", port }],
          resolve: async () => [{ address: "127.0.0.1", family: 4 }]
        })
        const error = yield* failureOf(fetcher.fetch(`https://localhost:${port}/p`))
        // Self-signed, so not trusted: refused during the handshake, before the request is sent.
        expect(error).toMatchObject({ _tag: "ProfileUnreachable", reason: "network" })
        expect(error.message).toContain("DEPTH_ZERO_SELF_SIGNED_CERT")
        expect(names).toEqual(["localhost"])
        expect(requests).toBe(0)
      })
  )

  it.scoped("messages name the URL without its query", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json({}, {}, 500))
      const fetcher = yield* fetcherWith()
      const error = yield* failureOf(fetcher.fetch(`${server.origin}/agent.json?token=s3cret`))
      expect(error.message).toContain(`${server.origin}/agent.json`)
      expect(error.message).not.toContain("s3cret")
    }))
})

describe("content that is not a profile: profile_malformed (422), version_unsupported (422)", () => {
  const malformed = (handler: Handler) =>
    Effect.gen(function*() {
      const server = yield* profileServer(handler)
      const fetcher = yield* fetcherWith()
      return yield* failureOf(fetcher.fetch(`${server.origin}/p`))
    })

  it.scoped("not JSON, not UTF-8, a __proto__ key, too deep", () =>
    Effect.gen(function*() {
      for (
        const body of [
          "{\"ucp\": {",
          "<html>hello</html>",
          "",
          JSON.stringify(platformProfile()).replace("{", "{\"__proto__\": {\"polluted\": true},"),
          `{"ucp": ${"[".repeat(100)}${"]".repeat(100)}}`
        ]
      ) {
        const error = yield* malformed(json(body))
        expect(error, body.slice(0, 40)).toMatchObject({
          _tag: "ProfileMalformed",
          reason: "not_json",
          code: "profile_malformed",
          httpStatus: 422
        })
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      const notUtf8 = yield* malformed((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))
      })
      expect(notUtf8).toMatchObject({ _tag: "ProfileMalformed", reason: "not_json" })
    }))

  it.scoped("served as something else than JSON", () =>
    Effect.gen(function*() {
      const error = yield* malformed(json(platformProfile(), { "content-type": "text/html" }))
      expect(error).toMatchObject({ _tag: "ProfileMalformed", reason: "content_type" })
    }))

  it.scoped("JSON that violates the schema, the first problem named by its JSONPath", () =>
    Effect.gen(function*() {
      const noServices = platformProfile()
      delete (noServices.ucp as Record<string, unknown>).services
      const error = yield* malformed(json(noServices))
      expect(error).toMatchObject({ _tag: "ProfileMalformed", reason: "schema" })
      expect(error.message).toContain("$.ucp.services is required")
      const badName = yield* malformed(json(platformProfile({ capabilities: { checkout: [] } })))
      expect(badName.message).toContain("$.ucp.capabilities.checkout must be a reverse-domain name")
      const noVersion = yield* malformed(json({ ucp: { services: {} } }))
      expect(noVersion.message).toContain("$.ucp.version is required")
      const notObject = yield* malformed(json([1, 2]))
      expect(notObject.message).toContain("$ must be an object")
    }))

  it.scoped("a version we do not serve", () =>
    Effect.gen(function*() {
      const error = yield* malformed(json(platformProfile({ version: "2026-01-11" })))
      expect(error).toMatchObject({
        _tag: "VersionUnsupported",
        code: "version_unsupported",
        httpStatus: 422,
        version: "2026-01-11",
        supported: ["2026-04-08"]
      })
      expect(error.message).toBe(
        "Protocol version 2026-01-11 is not supported. This business supports version 2026-04-08."
      )
      const draft = yield* malformed(json(platformProfile({ version: "draft<script>" })))
      expect(draft).toMatchObject({ _tag: "VersionUnsupported", version: undefined })
      expect(draft.message).not.toContain("draft")
    }))
})

describe("the cache", () => {
  it.scoped("a second fetch within max-age does not reach the server; past it, it does", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile(), { "cache-control": "public, max-age=300" }))
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      const first = yield* fetcher.fetch(url)
      expect(yield* fetcher.fetch(url)).toBe(first)
      yield* TestClock.adjust("299 seconds")
      yield* fetcher.fetch(url)
      expect(server.hits()).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* fetcher.fetch(url)
      expect(server.hits()).toBe(2)
    }))

  it.scoped("no-store, no-cache, a short max-age or no header: still kept 60 s (the spec's floor)", () =>
    Effect.gen(function*() {
      for (const cacheControl of ["no-store", "private, no-cache", "public, max-age=5", undefined]) {
        const server = yield* profileServer(
          cacheControl === undefined
            ? (_, response) => {
              response.writeHead(200, { "content-type": "application/json" })
              response.end(JSON.stringify(platformProfile()))
            }
            : json(platformProfile(), { "cache-control": cacheControl })
        )
        const fetcher = yield* fetcherWith()
        const url = `${server.origin}/p`
        yield* fetcher.fetch(url)
        yield* TestClock.adjust("59 seconds")
        yield* fetcher.fetch(url)
        expect(server.hits(), String(cacheControl)).toBe(1)
        yield* TestClock.adjust("1 second")
        yield* fetcher.fetch(url)
        expect(server.hits(), String(cacheControl)).toBe(2)
      }
    }))

  it.scoped("Age counts against max-age; a huge max-age is capped at 24 h", () =>
    Effect.gen(function*() {
      const aged = yield* profileServer(json(platformProfile(), { "cache-control": "max-age=600", age: "500" }))
      const fetcher = yield* fetcherWith()
      yield* fetcher.fetch(`${aged.origin}/p`)
      yield* TestClock.adjust("100 seconds")
      yield* fetcher.fetch(`${aged.origin}/p`)
      expect(aged.hits()).toBe(2)
      const forever = yield* profileServer(json(platformProfile(), { "cache-control": "max-age=31536000" }))
      yield* fetcher.fetch(`${forever.origin}/p`)
      yield* TestClock.adjust("23 hours")
      yield* fetcher.fetch(`${forever.origin}/p`)
      expect(forever.hits()).toBe(1)
      yield* TestClock.adjust("1 hour")
      yield* fetcher.fetch(`${forever.origin}/p`)
      expect(forever.hits()).toBe(2)
    }))

  it.scoped("spellings of one URL share an entry (scheme and host case, fragment)", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      const fetcher = yield* fetcherWith()
      yield* fetcher.fetch(`${server.origin}/p`)
      yield* fetcher.fetch(`HTTP://127.0.0.1:${server.port}/p#signing`)
      expect(server.hits()).toBe(1)
    }))

  it.scoped("failures are kept for a backoff that doubles: 5 s, then 10 s, then 20 s", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json({}, {}, 500))
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      const failures = (n: number) => Effect.replicateEffect(failureOf(fetcher.fetch(url)), n)
      const first = yield* failures(3)
      expect(first.every((e) => e._tag === "ProfileUnreachable")).toBe(true)
      expect(server.hits()).toBe(1)
      yield* TestClock.adjust("5 seconds")
      yield* failures(3)
      expect(server.hits()).toBe(2)
      yield* TestClock.adjust("9 seconds")
      yield* failures(1)
      expect(server.hits()).toBe(2)
      yield* TestClock.adjust("1 second")
      yield* failures(1)
      expect(server.hits()).toBe(3)
      yield* TestClock.adjust("19 seconds")
      yield* failures(1)
      expect(server.hits()).toBe(3)
    }))

  it.scoped("a malformed profile is a cached failure too, and a success after it resets the backoff", () =>
    Effect.gen(function*() {
      const answers = switchable(json("{nope"))
      const server = yield* profileServer(answers.handler)
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      yield* failureOf(fetcher.fetch(url))
      answers.set(json(platformProfile()))
      expect((yield* failureOf(fetcher.fetch(url)))._tag).toBe("ProfileMalformed")
      expect(server.hits()).toBe(1)
      yield* TestClock.adjust("5 seconds")
      yield* fetcher.fetch(url)
      expect(server.hits()).toBe(2)
      // Past the profile's lifetime a failure starts the backoff again from 5 s.
      answers.set(json({}, {}, 503))
      yield* TestClock.adjust("300 seconds")
      yield* failureOf(fetcher.fetch(url))
      yield* TestClock.adjust("5 seconds")
      yield* failureOf(fetcher.fetch(url))
      expect(server.hits()).toBe(4)
    }))

  it.scoped("concurrent fetches of one URL share one request; a caller giving up does not cancel it", () =>
    Effect.gen(function*() {
      const held: Array<() => void> = []
      const server = yield* profileServer((request, response) => {
        held.push(() => json(platformProfile())(request, response))
      })
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      const quitter = yield* Effect.fork(fetcher.fetch(url))
      const both = yield* Effect.fork(Effect.all([fetcher.fetch(url), fetcher.fetch(url)], { concurrency: 2 }))
      yield* eventually(() => server.hits() === 1)
      yield* realPause(50)
      const late = yield* Effect.fork(fetcher.fetch(url))
      yield* Fiber.interrupt(quitter)
      held.forEach((release) => release())
      const [a, b] = yield* Fiber.join(both)
      expect(a).toBe(b)
      expect(yield* Fiber.join(late)).toBe(a)
      expect(server.hits()).toBe(1)
    }))

  it.scoped("forceRefresh refetches at most once per 60 s per origin", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile(), { "cache-control": "public, max-age=3600" }))
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      const force = (u: string) => fetcher.fetch(u, { forceRefresh: true })
      yield* fetcher.fetch(url)
      yield* force(url)
      expect(server.hits("/p")).toBe(2)
      yield* force(url)
      yield* TestClock.adjust("59 seconds")
      yield* force(url)
      expect(server.hits("/p")).toBe(2)
      yield* TestClock.adjust("1 second")
      yield* force(url)
      expect(server.hits("/p")).toBe(3)
      yield* fetcher.fetch(url)
      expect(server.hits("/p")).toBe(3)
      // Another profile of the same origin: its forced refresh waits for the origin's 60 s.
      yield* fetcher.fetch(`${server.origin}/q`)
      yield* force(`${server.origin}/q`)
      expect(server.hits("/q")).toBe(1)
      yield* TestClock.adjust("60 seconds")
      yield* force(`${server.origin}/q`)
      expect(server.hits("/q")).toBe(2)
    }))

  it.scoped("a forced refresh that fails answers its failure but leaves the fresh profile cached", () =>
    Effect.gen(function*() {
      const answers = switchable(json(platformProfile()))
      const server = yield* profileServer(answers.handler)
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      const profile = yield* fetcher.fetch(url)
      answers.set(json({}, {}, 502))
      const error = yield* failureOf(fetcher.fetch(url, { forceRefresh: true }))
      expect(error).toMatchObject({ _tag: "ProfileUnreachable", upstreamStatus: 502 })
      expect(yield* fetcher.fetch(url)).toBe(profile)
      expect(server.hits()).toBe(2)
    }))

  it.scoped("forceRefresh on a cached failure refetches (within the origin's ration)", () =>
    Effect.gen(function*() {
      const answers = switchable(json({}, {}, 500))
      const server = yield* profileServer(answers.handler)
      const fetcher = yield* fetcherWith()
      const url = `${server.origin}/p`
      yield* failureOf(fetcher.fetch(url))
      answers.set(json(platformProfile()))
      yield* fetcher.fetch(url, { forceRefresh: true })
      expect(server.hits()).toBe(2)
    }))

  it.scoped("the cache is a bounded LRU: the least recently used entry is dropped", () =>
    Effect.gen(function*() {
      const server = yield* profileServer(json(platformProfile()))
      const fetcher = yield* fetcherWith({ cacheEntries: 2 })
      const get = (path: string) => fetcher.fetch(`${server.origin}${path}`)
      yield* get("/a")
      yield* get("/b")
      yield* get("/a") // /a is now the most recent, /b the least
      yield* get("/c") // drops /b
      expect([server.hits("/a"), server.hits("/b"), server.hits("/c")]).toEqual([1, 1, 1])
      yield* get("/a")
      yield* get("/c")
      expect([server.hits("/a"), server.hits("/c")]).toEqual([1, 1])
      yield* get("/b") // refetched, drops /a
      expect(server.hits("/b")).toBe(2)
      yield* get("/c")
      expect(server.hits("/c")).toBe(1)
      yield* get("/a")
      expect(server.hits("/a")).toBe(2)
    }))
})
