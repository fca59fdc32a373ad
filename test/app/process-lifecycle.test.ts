/**
 * The real process (`src/main.ts`): refusing to start (production secrets, a key of both kinds, bad
 * PORT, database down) with a clear message and a non-zero exit, the keys a development start
 * generates and prints, and graceful shutdown on SIGTERM (in-flight
 * requests finish, exit 0). Uses PostgreSQL when TEST_DATABASE_URL is set, else embedded PGlite.
 * With the embedded store: its database process outlives a Ctrl-C's in-flight requests and never
 * outlives the server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { childrenOf, isRunning } from "../support/processes.ts"
import {
  freePort,
  PROCESS_API_KEY,
  PROCESS_MERCHANT_API_KEY,
  type ServerProcess,
  spawnMain,
  startServer
} from "../support/server-process.ts"
import { TEST_UCP_SIGNING_KEY } from "../support/test-config.ts"
import { freshPostgresDatabaseUrl, hasPostgres, tempDirectory } from "../support/test-database.ts"

const exitOf = (server: ServerProcess) => Effect.promise(() => server.exited)

describe("refusing to start", () => {
  it.live("NODE_ENV=production without secrets: exit 1, naming every missing variable", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const server = yield* spawnMain({ NODE_ENV: "production", DATA_DIR: dataDir, PORT: String(yield* freePort) })
      const exit = yield* exitOf(server)
      expect(exit.code).toBe(1)
      for (
        const name of [
          "API_KEYS",
          "MERCHANT_API_KEYS",
          "VAULT_KEY",
          "WEBHOOK_SECRET",
          "WEBHOOK_RECEIVER_SECRETS",
          "UCP_SIGNING_KEYS"
        ]
      ) {
        expect(server.output()).toContain(name)
      }
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "a key in both API_KEYS and MERCHANT_API_KEYS: exit 1, naming MERCHANT_API_KEYS",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDirectory()
        const server = yield* spawnMain({
          API_KEYS: "sk_shared",
          MERCHANT_API_KEYS: "mk_own,sk_shared",
          DATA_DIR: dataDir,
          PORT: String(yield* freePort)
        })
        expect((yield* exitOf(server)).code).toBe(1)
        expect(server.output()).toContain("MERCHANT_API_KEYS: A key is in both API_KEYS and MERCHANT_API_KEYS")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("a bad PORT: exit 1, naming PORT", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const server = yield* spawnMain({ PORT: "eighty", DATA_DIR: dataDir })
      const exit = yield* exitOf(server)
      expect(exit.code).toBe(1)
      expect(server.output()).toMatch(/PORT/)
    }).pipe(Effect.scoped), 60_000)

  it.live("the database down at start: one clear line and a non-zero exit", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDirectory()
      const closedPort = yield* freePort
      // Production settings, so that no development notice is printed before the failure.
      const server = yield* spawnMain({
        NODE_ENV: "production",
        DATABASE_URL: `postgres://acp:s3cret@127.0.0.1:${closedPort}/acp`,
        API_KEYS: PROCESS_API_KEY,
        MERCHANT_API_KEYS: PROCESS_MERCHANT_API_KEY,
        VAULT_KEY: Buffer.alloc(32, 3).toString("base64"),
        WEBHOOK_SECRET: "whsec_process",
        WEBHOOK_RECEIVER_SECRETS: "whsec_process",
        UCP_SIGNING_KEYS: JSON.stringify([TEST_UCP_SIGNING_KEY]),
        DATA_DIR: dataDir,
        PORT: String(yield* freePort)
      })
      const exit = yield* exitOf(server)
      expect(exit.code).not.toBe(0)
      expect(exit.code).not.toBeNull()
      const lines = server.output().trim().split("\n")
      expect(lines, server.output()).toHaveLength(1)
      expect(lines[0]).toContain("DATABASE_URL")
      expect(lines[0]).toContain(`127.0.0.1:${closedPort}`)
      expect(lines[0]).toContain("ECONNREFUSED")
      expect(lines[0]).not.toContain("s3cret")
    }).pipe(Effect.scoped), 60_000)
})

describe("a development start", () => {
  it.live(
    "without API_KEYS and MERCHANT_API_KEYS: both keys generated, printed apart, each of its own kind",
    () =>
      Effect.gen(function*() {
        const server = yield* startServer({ API_KEYS: "", MERCHANT_API_KEYS: "" })
        const output = server.output()
        const agentKey = /Generated api_key, the agent API key \(kept in .*secrets\.json\): (sk_test_\S+)/.exec(output)
          ?.[1]
        const merchantKey =
          /Generated merchant_api_key, the merchant API key \(kept in .*secrets\.json\): (mk_test_\S+)/
            .exec(output)?.[1]
        expect(agentKey, output).toBeDefined()
        expect(merchantKey, output).toBeDefined()
        const call = (path: string, key: string) =>
          Effect.promise(() =>
            fetch(`${server.baseUrl}${path}`, {
              headers: { authorization: `Bearer ${key}`, "api-version": "2025-09-29" }
            }).then((response) => response.status)
          )
        expect(yield* call("/orders/ord_none", merchantKey!)).toBe(404)
        expect(yield* call("/orders/ord_none", agentKey!)).toBe(403)
        expect(yield* call("/checkout_sessions/cs_none", agentKey!)).toBe(404)
        expect(yield* call("/checkout_sessions/cs_none", merchantKey!)).toBe(403)
      }).pipe(Effect.scoped),
    60_000
  )
})

/** Sends the headers and half of a JSON body; returns a function sending the rest and the response. */
const slowRequest = (server: ServerProcess, body: string) =>
  Effect.sync(() => {
    const bytes = Buffer.from(body, "utf8")
    const half = Math.floor(bytes.length / 2)
    let status = 0
    let text = ""
    let pending: () => void = () => {}
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({
        host: "127.0.0.1",
        port: server.port,
        method: "POST",
        path: "/checkout_sessions",
        headers: {
          authorization: `Bearer ${PROCESS_API_KEY}`,
          "api-version": "2025-09-29",
          "content-type": "application/json",
          "content-length": String(bytes.length)
        }
      }, (res) => {
        status = res.statusCode ?? 0
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve({ status, text }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.write(bytes.subarray(0, half))
      pending = () => req.end(bytes.subarray(half))
    })
    return { finish: () => pending(), response }
  })

/** Whether a new TCP connection to the port is refused (the server stopped accepting). */
const refusesConnections = (port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(false))
    })
    socket.once("error", () => resume(Effect.succeed(true)))
  })

describe("graceful shutdown", () => {
  it.live(
    "SIGTERM: stops accepting, the in-flight request still gets its response, exit 0",
    () =>
      Effect.gen(function*() {
        const env = hasPostgres ? { DATABASE_URL: yield* freshPostgresDatabaseUrl } : {}
        const server = yield* startServer(env)
        const slow = yield* slowRequest(server, JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 2 }] }))
        // Let the server dispatch the request (headers read, body pending).
        yield* Effect.sleep("300 millis")
        server.child.kill("SIGTERM")
        // Shutdown has begun once new connections are refused.
        let refused = false
        for (let i = 0; i < 200 && !refused; i++) {
          refused = yield* refusesConnections(server.port)
          if (!refused) yield* Effect.sleep("25 millis")
        }
        expect(refused).toBe(true)
        expect(server.child.exitCode).toBeNull() // still running: it waits for the request
        slow.finish()
        const response = yield* Effect.promise(() => slow.response)
        expect(response.status).toBe(201)
        expect(JSON.parse(response.text).id).toMatch(/^cs_/)
        const exit = yield* exitOf(server)
        expect(exit, server.output()).toEqual({ code: 0, signal: null })
      }).pipe(Effect.scoped),
    90_000
  )
})

/** Polls until `check` holds, up to `seconds`; whether it did. */
const eventually = (check: () => boolean, seconds: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds * 10; i++) {
      if (check()) return true
      yield* Effect.sleep("100 millis")
    }
    return check()
  })

/** The embedded store's database process: the server's only child. */
const databaseProcessOf = (server: ServerProcess) =>
  Effect.sync(() => {
    const children = childrenOf(server.child.pid!)
    expect(children, "the server's child processes").toHaveLength(1)
    return children[0]!
  })

describe("the embedded store's database process", () => {
  it.live(
    "Ctrl-C to the whole process group: the in-flight request still completes, then everything stops",
    () =>
      Effect.gen(function*() {
        const server = yield* startServer({}, { processGroup: true })
        const database = yield* databaseProcessOf(server)
        const slow = yield* slowRequest(server, JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 1 }] }))
        yield* Effect.sleep("300 millis")
        // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
        process.kill(-server.child.pid!, "SIGINT")
        let refused = false
        for (let i = 0; i < 200 && !refused; i++) {
          refused = yield* refusesConnections(server.port)
          if (!refused) yield* Effect.sleep("25 millis")
        }
        expect(refused).toBe(true)
        expect(isRunning(database)).toBe(true) // the server still needs it
        slow.finish()
        const response = yield* Effect.promise(() => slow.response)
        expect(response.status, response.text).toBe(201)
        const exit = yield* exitOf(server)
        expect(exit, server.output()).toEqual({ code: 0, signal: null })
        // The server stopped it before exiting.
        expect(isRunning(database)).toBe(false)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live("the server killed outright: its database process stops by itself", () =>
    Effect.gen(function*() {
      const server = yield* startServer({})
      const database = yield* databaseProcessOf(server)
      server.child.kill("SIGKILL")
      yield* exitOf(server)
      expect(yield* eventually(() => !isRunning(database), 30)).toBe(true)
    }).pipe(Effect.scoped), 90_000)
})
