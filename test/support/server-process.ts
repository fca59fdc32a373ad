/**
 * Real server processes for tests: `node --import tsx src/main.ts` (one OS process, so signals
 * reach the server itself), on a free port, with a clean environment. Every process started in a
 * scope is SIGKILLed when the scope closes, also when the test fails.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Data, Duration, Effect, Redacted, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isMerchantPath } from "./test-config.ts"
import { copyInitializedDataDir, tempDirectory } from "./test-database.ts"

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url))

export const PROCESS_API_KEY = "sk_test_process_key"
export const PROCESS_MERCHANT_API_KEY = "mk_test_process_key"

/** The key of the kind `path`'s route takes: the merchant's for orders and deliveries, else the agent's. */
export const processKeyFor = (path: string): string => isMerchantPath(path) ? PROCESS_MERCHANT_API_KEY : PROCESS_API_KEY

/** A port that was free a moment ago (the OS picks it). */
export const freePort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const server = createServer()
  server.unref()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly baseUrl: string
  /** stdout and stderr so far. */
  readonly output: () => string
  /** Resolves when the process has exited. */
  readonly exited: Promise<ProcessExit>
}

export class ServerStartError extends Data.TaggedError("ServerStartError")<{ readonly message: string }> {}

export interface SpawnOptions {
  /**
   * In a process group of its own (led by the server), so that a test can signal the whole group
   * as a terminal's Ctrl-C or a service manager does: `process.kill(-server.child.pid, signal)`.
   */
  readonly processGroup?: boolean
  /** The entry point, relative to the project root; `src/main.ts` unless a test needs another. */
  readonly entry?: string
}

/** Spawns `src/main.ts` (or `options.entry`) with `env` added to a minimal environment (PATH, HOME); not awaited ready. */
export const spawnMain = (env: Record<string, string>, options?: SpawnOptions) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, ["--import", "tsx", options?.entry ?? "src/main.ts"], {
        cwd: PROJECT_ROOT,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", LOG_LEVEL: "Warn", ...env },
        stdio: ["ignore", "pipe", "pipe"],
        detached: options?.processGroup === true
      })
      let output = ""
      child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
      const exited = new Promise<ProcessExit>((resolve) =>
        child.once("exit", (code, signal) => resolve({ code, signal }))
      )
      const port = Number(env["PORT"] ?? "8080")
      const scheme = env["TLS_CERT_FILE"] !== undefined ? "https" : "http"
      return {
        child,
        port,
        baseUrl: `${scheme}://127.0.0.1:${port}`,
        output: () => output,
        exited
      } satisfies ServerProcess
    }),
    (server) =>
      Effect.promise(async () => {
        if (server.child.exitCode === null && server.child.signalCode === null) {
          server.child.kill("SIGKILL")
          await server.exited
        }
      })
  )

/** Waits for a process's `/healthz` to answer 200; fails with its output if it exits or takes over 60 s. */
export const waitHealthy = (server: ServerProcess) =>
  Effect.gen(function*() {
    const exitedEarly = Effect.promise(() => server.exited).pipe(
      Effect.flatMap((exit) =>
        Effect.fail(
          new ServerStartError({
            message: `server exited (${exit.code ?? exit.signal}) before it was healthy:\n${server.output()}`
          })
        )
      )
    )
    const healthy = Effect.tryPromise(() => fetch(`${server.baseUrl}/healthz`)).pipe(
      Effect.filterOrFail((response) => response.status === 200),
      Effect.retry(Schedule.spaced("100 millis")),
      Effect.orDie
    )
    yield* Effect.raceFirst(healthy, exitedEarly).pipe(
      Effect.timeoutFail({
        duration: Duration.seconds(60),
        onTimeout: () => new ServerStartError({ message: `server not healthy after 60 s:\n${server.output()}` })
      })
    )
    return server
  })

/**
 * Spawns a server on a free port with a temporary DATA_DIR and waits until it is healthy. On the
 * embedded store, a new DATA_DIR starts with an initialized database directory (copied, see
 * `copyInitializedDataDir`); the server's own initialization is tested in
 * test/db/database.test.ts.
 */
export const startServer = (env: Record<string, string>, options?: SpawnOptions) =>
  Effect.gen(function*() {
    const port = yield* freePort
    let dataDir = env["DATA_DIR"]
    if (dataDir === undefined) {
      dataDir = yield* tempDirectory("acp-process-")
      if (env["DATABASE_URL"] === undefined) yield* copyInitializedDataDir(join(dataDir, "pglite"))
    }
    const server = yield* spawnMain(
      {
        API_KEYS: PROCESS_API_KEY,
        MERCHANT_API_KEYS: PROCESS_MERCHANT_API_KEY,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: "127.0.0.1",
        ...env
      },
      options
    )
    return yield* waitHealthy(server)
  })

/** A client of the database at `url`, for checking what the servers stored. */
export const databaseClient = (url: string) =>
  PgClient.make({ url: Redacted.make(url), maxConnections: 2 }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)

export interface HttpResult {
  readonly status: number
  readonly headers: Headers

  readonly body: any
}

/** One JSON request to a server process with the test key of the route's kind and the API version. */
export const callServer = (
  server: { readonly baseUrl: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Effect.Effect<HttpResult> =>
  Effect.promise(async () => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${processKeyFor(path)}`,
        "api-version": "2025-09-29",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = text
    }
    return { status: response.status, headers: response.headers, body: parsed }
  })
