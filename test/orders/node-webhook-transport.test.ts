/**
 * The order-event sender's transport over Node's HTTP client, against real local servers: what
 * it sends, what it reads of the answer, connection reuse, and every way of not being answered.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber } from "effect"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { NodeWebhookTransport } from "../../src/orders/http/node-webhook-transport.ts"
import { WebhookTransport } from "../../src/orders/webhook-transport.ts"
import { freePort } from "../support/server-process.ts"
import { hasOpenssl, selfSignedCertificate } from "../support/tls-certificate.ts"

interface Received {
  readonly method: string | undefined
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** A local receiver answering with `answer`; counts connections and requests that were cut off. */
const receiver = (
  answer: (request: IncomingMessage, response: ServerResponse) => void,
  server: Server = createServer()
) =>
  Effect.acquireRelease(
    Effect.async<{
      readonly url: string
      readonly received: Array<Received>
      readonly connections: () => number
      readonly aborted: () => number
    }>((resume) => {
      let connections = 0
      let aborted = 0
      const received: Array<Received> = []
      server.on("request", (request: IncomingMessage, response: ServerResponse) => {
        let body = ""
        request.setEncoding("utf8")
        request.on("data", (chunk: string) => (body += chunk))
        request.on("end", () => {
          received.push({ method: request.method, headers: request.headers, body })
          answer(request, response)
        })
        response.on("close", () => {
          if (!response.writableFinished) aborted++
        })
      })
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () => {
        const scheme = "cert" in server ? "https" : "http"
        resume(Effect.succeed({
          url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
          received,
          connections: () => connections,
          aborted: () => aborted
        }))
      })
    }),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const post = (url: string, body = "{\"type\":\"order_create\"}", deadline = Duration.seconds(5)) =>
  Effect.flatMap(
    WebhookTransport,
    (transport) =>
      transport.post({ url, headers: { "content-type": "application/json", "request-id": "evt_1" }, body }, deadline)
  )

describe("the order-event sender's transport (Node's HTTP client)", () => {
  it.scoped("sends the exact body with its headers and reads the status and Retry-After", () =>
    Effect.gen(function*() {
      const target = yield* receiver((_, response) =>
        response.writeHead(429, { "retry-after": "7", "content-type": "application/json" }).end("{\"slow\":\"down\"}")
      )
      const body = "{\"data\":{\"note\":\"é ✓\"}}"
      const answer = yield* post(target.url, body)
      expect(answer).toEqual({ status: 429, retryAfter: "7" })
      const [request] = target.received
      expect(request!.method).toBe("POST")
      expect(request!.body).toBe(body)
      expect(request!.headers["content-length"]).toBe(String(Buffer.byteLength(body)))
      expect(request!.headers["content-type"]).toBe("application/json")
      expect(request!.headers["request-id"]).toBe("evt_1")
    }).pipe(Effect.provide(NodeWebhookTransport)))

  it.scoped("keeps the connection to the receiver open between deliveries, whatever the answers' bodies", () =>
    Effect.gen(function*() {
      const target = yield* receiver((_, response) => response.writeHead(200).end("x".repeat(100_000)))
      for (let i = 0; i < 3; i++) expect((yield* post(target.url)).status).toBe(200)
      expect(target.connections()).toBe(1)
    }).pipe(Effect.provide(NodeWebhookTransport)))

  it.scoped("no answer within the deadline fails the post and drops the request", () =>
    Effect.gen(function*() {
      const target = yield* receiver(() => {}) // never answers
      const result = yield* Effect.either(post(target.url, undefined, Duration.millis(200)))
      expect(result).toEqual(Either.left(expect.objectContaining({ reason: "no answer within 200ms" })))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      expect(target.aborted()).toBe(1)
    }).pipe(Effect.provide(NodeWebhookTransport)))

  it.scoped("an answer cut off in its body fails the post", () =>
    Effect.gen(function*() {
      const target = yield* receiver((_, response) => {
        response.writeHead(200, { "content-length": "1000" })
        response.write("partial", () => response.destroy())
      })
      const result = yield* Effect.either(post(target.url))
      expect(Either.isLeft(result)).toBe(true)
    }).pipe(Effect.provide(NodeWebhookTransport)))

  it.scoped("a refused connection fails the post, naming the reason", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const result = yield* Effect.either(post(`http://127.0.0.1:${port}/hook`))
      expect(result).toEqual(Either.left(expect.objectContaining({ reason: "ECONNREFUSED" })))
    }).pipe(Effect.provide(NodeWebhookTransport)))

  it.scoped("interrupting a delivery drops its request", () =>
    Effect.gen(function*() {
      const target = yield* receiver(() => {})
      const fiber = yield* Effect.fork(post(target.url))
      while (target.received.length === 0) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      expect(target.aborted()).toBe(1)
    }).pipe(Effect.provide(NodeWebhookTransport)))

  it.scoped.skipIf(!hasOpenssl)(
    "an https target is spoken to over TLS, its certificate verified",
    () =>
      Effect.gen(function*() {
        const { certFile, keyFile } = yield* selfSignedCertificate
        const target = yield* receiver(
          (_, response) => response.writeHead(200).end(),
          createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) })
        )
        expect(target.url.startsWith("https://")).toBe(true)
        // Not signed by a trusted authority: refused before anything is sent.
        const result = yield* Effect.either(post(target.url))
        expect(result).toEqual(Either.left(expect.objectContaining({ reason: "DEPTH_ZERO_SELF_SIGNED_CERT" })))
        expect(target.received).toEqual([])
        expect(target.connections()).toBe(1)
      }).pipe(Effect.provide(NodeWebhookTransport))
  )
})
