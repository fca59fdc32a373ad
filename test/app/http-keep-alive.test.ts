/**
 * Idle keep-alive connections (`HTTP_KEEP_ALIVE_TIMEOUT_SECONDS`): the real server layer
 * (`HttpServerLive`) on a port, a client that keeps its connection. Each answer announces how long
 * an idle connection stays open (`Keep-Alive: timeout=`), which clients such as Node's agent use to
 * give up a connection before the server closes it, and the server closes it then.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Agent, request } from "node:http"
import { connect, type Socket } from "node:net"
import { HttpServerLive } from "../../src/app/server.ts"
import { DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS } from "../../src/platform/config.ts"
import { testApp } from "../support/http.ts"
import { freePort } from "../support/server-process.ts"

const serve = (port: number, seconds?: number) =>
  Layer.build(
    HttpServerLive.pipe(
      Layer.provide(
        testApp({
          config: {
            port,
            host: "127.0.0.1",
            ...(seconds !== undefined ? { httpKeepAliveTimeoutSeconds: seconds } : {})
          }
        })
      )
    )
  )

/** GET /healthz on a kept connection: the status, the Keep-Alive header and the connection's socket. */
const healthz = (port: number, agent: Agent) =>
  Effect.async<{ status: number; keepAlive: string; socket: Socket }, Error>((resume) => {
    let socket: Socket | undefined
    const outgoing = request({ host: "127.0.0.1", port, path: "/healthz", agent }, (incoming) => {
      incoming.resume()
      incoming.on("end", () =>
        resume(Effect.succeed({
          status: incoming.statusCode ?? 0,
          keepAlive: String(incoming.headers["keep-alive"]),
          socket: socket!
        })))
    })
    outgoing.on("socket", (given) => (socket = given))
    outgoing.on("error", (error) => resume(Effect.fail(error)))
    outgoing.end()
  })

/**
 * One GET /healthz on a raw connection, then the milliseconds until the server closes it (a
 * client of its own, not Node's agent, which gives a connection up a second before the announced
 * time), or `undefined` if it is still open after `waitMs`.
 */
const idleUntilClosed = (port: number, waitMs: number) =>
  Effect.async<{ head: string; closedAfter: number | undefined }, Error>((resume) => {
    const socket = connect(port, "127.0.0.1")
    let received = ""
    let answeredAt: number | undefined
    let timer: NodeJS.Timeout | undefined
    socket.setEncoding("utf8")
    socket.on("connect", () => socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
    socket.on("data", (chunk: string) => {
      received += chunk
      if (answeredAt === undefined && received.includes("\r\n\r\n")) {
        answeredAt = Date.now()
        timer = setTimeout(() => {
          socket.destroy()
          resume(Effect.succeed({ head: received, closedAfter: undefined }))
        }, waitMs)
      }
    })
    socket.on("error", (error) => resume(Effect.fail(error)))
    socket.on("close", () => {
      clearTimeout(timer)
      resume(
        answeredAt === undefined
          ? Effect.fail(new Error(`closed before an answer: ${received}`))
          : Effect.succeed({ head: received, closedAfter: Date.now() - answeredAt })
      )
    })
  })

describe("idle keep-alive connections", () => {
  it.live("are announced as kept 65 s by default (Node's default is 5 s) and are reused", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* serve(port)
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
      const first = yield* healthz(port, agent)
      expect(first.status).toBe(200)
      expect(DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS).toBe(65)
      expect(first.keepAlive).toBe("timeout=65")
      // The same connection answers the next request.
      const second = yield* healthz(port, agent)
      expect(second.socket).toBe(first.socket)
    }).pipe(Effect.scoped))

  it.live("close after HTTP_KEEP_ALIVE_TIMEOUT_SECONDS of idling, as announced", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* serve(port, 2)
      const { closedAfter, head } = yield* idleUntilClosed(port, 10_000)
      expect(head).toMatch(/^HTTP\/1\.1 200 /)
      expect(head.toLowerCase()).toContain("keep-alive: timeout=2\r\n")
      expect(closedAfter).toBeDefined()
      expect(closedAfter!).toBeGreaterThanOrEqual(1_500)
      expect(closedAfter!).toBeLessThan(6_000)
    }).pipe(Effect.scoped), 20_000)
})
