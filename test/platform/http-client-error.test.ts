/**
 * Requests Node's HTTP parser refuses before any route (`src/platform/http/client-error.ts`): the
 * real server layer on a port and raw connections, since a client library would not send them.
 * Each gets the status Node gives it with our error object, and its connection is closed; a
 * request answered before on the same connection is unaffected.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { connect } from "node:net"
import { HttpServerLive } from "../../src/app/server.ts"
import { testApp } from "../support/http.ts"
import { freePort } from "../support/server-process.ts"

const serve = (port: number) =>
  Layer.build(HttpServerLive.pipe(Layer.provide(testApp({ config: { port, host: "127.0.0.1" } }))))

/**
 * Sends `bytes` on a new connection and reads everything the server sends until it closes; with
 * `then`, sends `then.bytes` once what was received includes `then.after`.
 */
const exchange = (port: number, bytes: string, then?: { readonly after: string; readonly bytes: string }) =>
  Effect.async<string, Error>((resume) => {
    const socket = connect(port, "127.0.0.1")
    let received = ""
    const timer = setTimeout(() => {
      socket.destroy()
      resume(Effect.fail(new Error(`still open after 5 s: ${received}`)))
    }, 5_000)
    socket.setEncoding("utf8")
    socket.on("connect", () => socket.write(bytes))
    let sentThen = false
    socket.on("data", (chunk: string) => {
      received += chunk
      if (then !== undefined && !sentThen && received.includes(then.after)) {
        sentThen = true
        socket.write(then.bytes)
      }
    })
    // A reset after the answer is how some refusals end: what arrived before it is the answer.
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      resume(Effect.succeed(received))
    })
  })

/** The last response of `received`: its status, its lowercased head and its JSON body. */
const lastResponse = (received: string) => {
  const start = received.lastIndexOf("HTTP/1.1 ")
  const [head, body] = received.slice(start).split("\r\n\r\n", 2) as [string, string]
  return { status: Number(head.slice(9, 12)), head: head.toLowerCase(), body: JSON.parse(body) }
}

/** The messages logged while `effect` runs, by the loggers the server's layer is built under. */
const loggedDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const messages: Array<string> = []
  const logger = Logger.make(({ message }) => void messages.push(String(message)))
  return Effect.map(Effect.provide(effect, Logger.replace(Logger.defaultLogger, logger)), () => messages)
}

describe("requests Node's parser refuses", () => {
  it.live("a malformed request is 400 with the error object, and the connection is closed", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* serve(port)
      const answer = lastResponse(yield* exchange(port, "NOT HTTP AT ALL\r\n\r\n"))
      expect(answer.status).toBe(400)
      expect(answer.head).toContain("content-type: application/json")
      expect(answer.head).toContain("connection: close")
      expect(answer.body).toEqual({
        type: "invalid_request",
        code: "invalid",
        message: "The request is not valid HTTP/1.1."
      })
    }).pipe(Effect.scoped))

  it.live("headers over Node's limit are 431 request_too_large, and nothing of them is repeated", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* serve(port)
      const secret = "4242424242424242".repeat(1_500)
      const received = yield* exchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Card: ${secret}\r\n\r\n`)
      const answer = lastResponse(received)
      expect(answer.status).toBe(431)
      expect(answer.body).toMatchObject({ type: "invalid_request", code: "request_too_large" })
      expect(received).not.toContain("4242424242424242")
    }).pipe(Effect.scoped))

  it.live("each answer has an access log line: its status and Node's code, nothing of the request", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const logged = yield* loggedDuring(
        Effect.gen(function*() {
          yield* serve(port)
          yield* exchange(port, "NOT 4242424242424242 HTTP\r\n\r\n")
          yield* exchange(
            port,
            `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Card: ${"4242424242424242".repeat(1_500)}\r\n\r\n`
          )
        }).pipe(Effect.scoped)
      )
      const lines = logged.filter((message) => message.startsWith("client error"))
      expect(lines).toEqual([
        expect.stringMatching(/^client error 400 HPE_[A-Z_]+$/),
        "client error 431 HPE_HEADER_OVERFLOW"
      ])
    }))

  it.live("after an answered request on a kept connection, a malformed one still gets its 400", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* serve(port)
      const received = yield* exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", {
        after: "{\"status\":\"ok\"}",
        bytes: "GET / HTTP/1.1\r\nHost x\r\n\r\n"
      })
      expect(received).toMatch(/^HTTP\/1\.1 200 /)
      const answer = lastResponse(received)
      expect(answer.status).toBe(400)
      expect(answer.body.code).toBe("invalid")
    }).pipe(Effect.scoped))
})
