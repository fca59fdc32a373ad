/**
 * `WORKERS`: one primary process forks the server processes, which share the port and the
 * database; a worker that dies is replaced; SIGTERM stops them all. Real processes
 * (`src/main.ts`); the PostgreSQL cases need TEST_DATABASE_URL and report themselves skipped
 * without it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { address, buyer } from "../support/http.ts"
import { childrenOf, isRunning } from "../support/processes.ts"
import { callServer, freePort, type ServerProcess, spawnMain, startServer } from "../support/server-process.ts"
import { freshPostgresDatabaseUrl, hasPostgres, tempDirectory } from "../support/test-database.ts"

const deployment = (url: string) => ({
  DATABASE_URL: url,
  VAULT_KEY: Buffer.alloc(32, 5).toString("base64"),
  WORKERS: "2",
  // The primary logs at Info when every worker listens (see `allListening`).
  LOG_LEVEL: "Info"
})

/** The server's output, for a failure to say what the processes printed. */
const failWithOutput = (server: ServerProcess, what: string) => () =>
  new Error(`${what}; children now: [${childrenOf(server.child.pid!).join(", ")}]; output:\n${server.output()}`)

/** Waits until the primary has `count` children (workers) that pass `accept`; fails after 60 s. */
const workersOf = (
  server: ServerProcess,
  count: number,
  accept: (children: Array<number>) => boolean = () => true
) =>
  Effect.sync(() => childrenOf(server.child.pid!)).pipe(
    Effect.filterOrFail(
      (children) => children.length === count && accept(children),
      failWithOutput(server, `not ${count} workers after 60 s`)
    ),
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("60 seconds"))),
    Effect.orDie
  )

/**
 * Waits until the primary says every worker listens. Until then a worker's exit is a failed start
 * (the primary stops), so a worker must not be killed before: the first one to listen answers
 * health checks while the second may still be starting.
 */
const allListening = (server: ServerProcess, count: number) =>
  Effect.sync(() => server.output()).pipe(
    Effect.filterOrFail(
      (output) => output.includes(`${count} workers listening`),
      failWithOutput(server, `the primary did not report ${count} workers listening after 60 s`)
    ),
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("60 seconds"))),
    Effect.orDie
  )

describe("WORKERS", () => {
  it.live("above 1 without DATABASE_URL: the start is refused, naming WORKERS", () =>
    Effect.gen(function*() {
      const server = yield* spawnMain({
        WORKERS: "2",
        PORT: String(yield* freePort),
        DATA_DIR: yield* tempDirectory("acp-workers-")
      })
      const exit = yield* Effect.promise(() => server.exited)
      expect(exit.code).toBe(1)
      expect(server.output()).toContain("WORKERS")
      expect(server.output()).toContain("needs DATABASE_URL")
    }).pipe(Effect.scoped))

  it.live("0 or a word: refused, naming WORKERS", () =>
    Effect.gen(function*() {
      for (const value of ["0", "two"]) {
        const server = yield* spawnMain({ WORKERS: value, PORT: String(yield* freePort) })
        expect((yield* Effect.promise(() => server.exited)).code).toBe(1)
        expect(server.output()).toContain("WORKERS")
      }
    }).pipe(Effect.scoped))
})

describe.skipIf(!hasPostgres)("WORKERS=2 on PostgreSQL", () => {
  it.live(
    "two workers serve one port; a killed worker is replaced; SIGTERM stops every process",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const server = yield* startServer(deployment(url))
        yield* allListening(server, 2)
        const first = yield* workersOf(server, 2)
        const creates = yield* Effect.all(
          Array.from({ length: 8 }, () =>
            callServer(server, "POST", "/checkout_sessions", {
              items: [{ id: "mug-ceramic", quantity: 1 }],
              buyer,
              fulfillment_address: address
            })),
          { concurrency: "unbounded" }
        )
        expect(creates.map((r) => r.status)).toEqual(Array(8).fill(201))
        // A session made through one worker reads the same through any.
        for (const created of creates) {
          expect((yield* callServer(server, "GET", `/checkout_sessions/${created.body.id}`)).status).toBe(200)
        }

        process.kill(first[0]!, "SIGKILL")
        const replaced = yield* workersOf(server, 2, (children) => !children.includes(first[0]!))
        expect(replaced).toContain(first[1]!)
        const after = yield* Effect.retry(
          callServer(server, "GET", "/readyz").pipe(
            Effect.filterOrFail((r) => r.status === 200, failWithOutput(server, "/readyz not 200 after 30 s"))
          ),
          Schedule.spaced("200 millis").pipe(Schedule.upTo("30 seconds"))
        ).pipe(Effect.orDie)
        expect(after.status).toBe(200)

        server.child.kill("SIGTERM")
        const exit = yield* Effect.promise(() => server.exited)
        expect(exit.code).toBe(0)
        for (const pid of replaced) expect(isRunning(pid)).toBe(false)
      }).pipe(Effect.scoped),
    120_000
  )
})
