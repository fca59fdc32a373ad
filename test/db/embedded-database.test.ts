/**
 * The embedded database's own process (`src/db/embedded-database.ts`): restarted on the same
 * port with its data after a crash, stopped cleanly with its scope, not restarted when in memory,
 * and start-up failures told in one line. (A server killed outright leaving no database process
 * behind, and Ctrl-C to the process group, are in test/app/process-lifecycle.test.ts.)
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DatabaseError, makeDatabaseLayer } from "../../src/db/database.ts"
import { type EmbeddedDatabaseProcess, startEmbeddedDatabaseProcess } from "../../src/db/embedded-database.ts"
import { isRunning } from "../support/processes.ts"
import { pgliteTemplate, tempDirectory } from "../support/test-database.ts"

/** A one-connection client of the database process, as the server's pool is. */
const clientOf = (database: EmbeddedDatabaseProcess) =>
  PgClient.make({
    url: Redacted.make(`postgres://postgres@127.0.0.1:${database.port}/postgres`),
    maxConnections: 1,
    idleTimeout: Duration.zero,
    connectTimeout: Duration.seconds(2)
  }).pipe(Effect.provide(Reactivity.layer))

/** A process that runs until the scope closes; its id. */
const liveProcess = Effect.acquireRelease(
  Effect.sync(() => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })),
  (child) => Effect.sync(() => child.kill("SIGKILL"))
).pipe(Effect.map((child) => child.pid!))

/** The id of a process that has exited. */
const deadProcessId = Effect.async<number>((resume) => {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
  child.once("exit", () => resume(Effect.succeed(child.pid!)))
})

/** The database layer's start failure: a `DatabaseError` of one line; its message. */
const startFailure = (database: ReturnType<typeof makeDatabaseLayer>) =>
  Effect.gen(function*() {
    const error = yield* Layer.build(database).pipe(Effect.scoped, Effect.flip)
    expect(error).toBeInstanceOf(DatabaseError)
    expect(error.message).not.toContain("\n")
    return error.message
  })

const pidOf = (database: EmbeddedDatabaseProcess) =>
  Effect.flatMap(database.pid, (pid) => (pid === undefined ? Effect.dieMessage("no process id") : Effect.succeed(pid)))

describe("the embedded database process", () => {
  it.live(
    "killed, it is started again on the same port, with everything committed before",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const database = yield* startEmbeddedDatabaseProcess({
          dataDir: join(dir, "pglite"),
          loadDataDir: yield* pgliteTemplate
        })
        const sql = yield* clientOf(database)
        yield* sql`CREATE TABLE kept (n integer)`
        yield* sql`INSERT INTO kept VALUES (1), (2)`
        const pid = yield* pidOf(database)

        process.kill(pid, "SIGKILL")
        const rows = yield* sql<{ n: number }>`SELECT n FROM kept ORDER BY n`.pipe(
          Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 300 })
        )
        expect(rows).toEqual([{ n: 1 }, { n: 2 }])
        const restarted = yield* pidOf(database)
        expect(restarted).not.toBe(pid)
        expect(isRunning(pid)).toBe(false)
        // Writable again, too.
        yield* sql`INSERT INTO kept VALUES (3)`
        expect(yield* sql`SELECT n FROM kept`).toHaveLength(3)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "its scope closed, it stops; the directory opens again with its data, not seeded again",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const dataDir = join(dir, "pglite")
        const loadDataDir = yield* pgliteTemplate
        const first = yield* Effect.scoped(Effect.gen(function*() {
          const database = yield* startEmbeddedDatabaseProcess({ dataDir, loadDataDir })
          const sql = yield* clientOf(database)
          yield* sql`CREATE TABLE kept (n integer)`
          yield* sql`INSERT INTO kept VALUES (7)`
          return yield* pidOf(database)
        }))
        expect(isRunning(first)).toBe(false)

        const rows = yield* Effect.scoped(Effect.gen(function*() {
          // The archive is offered again; the directory is not new, so it is opened as it is.
          const database = yield* startEmbeddedDatabaseProcess({ dataDir, loadDataDir })
          const sql = yield* clientOf(database)
          return yield* sql<{ n: number }>`SELECT n FROM kept`
        }))
        expect(rows).toEqual([{ n: 7 }])
      }).pipe(Effect.scoped),
    90_000
  )

  it.live("in memory, it is not restarted: its data went with it", () =>
    Effect.gen(function*() {
      const database = yield* startEmbeddedDatabaseProcess({ loadDataDir: yield* pgliteTemplate })
      const sql = yield* clientOf(database)
      yield* sql`SELECT 1`
      const pid = yield* pidOf(database)
      process.kill(pid, "SIGKILL")
      yield* Effect.sleep("1500 millis") // a restart would have happened after 0.1 s
      expect(yield* pidOf(database)).toBe(pid)
      expect(isRunning(pid)).toBe(false)
      const failed = yield* Effect.flip(sql`SELECT 1`)
      expect(failed._tag).toBe("SqlError")
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "a data directory PGlite cannot open fails the layer with a one-line DatabaseError",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const dataDir = join(dir, "pglite")
        mkdirSync(dataDir)
        writeFileSync(join(dataDir, "PG_VERSION"), "not a version\n")
        const message = yield* startFailure(makeDatabaseLayer({ kind: "embedded", dataDir }))
        expect(message).toContain("Cannot open the embedded database (PGlite)")
        expect(message).toContain("the database process exited with 1")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a data directory open in another process is refused; one left locked by a dead process is taken over",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const dataDir = join(dir, "pglite")
        const lockFile = `${dataDir}.lock`
        const loadDataDir = yield* pgliteTemplate
        const open = makeDatabaseLayer({ kind: "embedded", dataDir, loadDataDir })

        // Held by a process that is alive: refused, and the lock is left alone.
        const holder = yield* liveProcess
        writeFileSync(lockFile, String(holder))
        const refused = yield* startFailure(open)
        expect(refused).toContain(`the data directory is in use by process ${holder}`)
        expect(readFileSync(lockFile, "utf8")).toBe(String(holder))
        expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(false) // not touched

        // Left by a process that is gone: taken over, held while open, removed at the end.
        writeFileSync(lockFile, String(yield* deadProcessId))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(open)
          expect(readFileSync(lockFile, "utf8")).toBe(String(process.pid))
          // A second opening meanwhile, here in the same process, is refused too.
          expect(yield* startFailure(open)).toContain("already open in this process")
        }))
        expect(existsSync(lockFile)).toBe(false)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live("processes locking one data directory at once: exactly one gets it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDirectory()
      const dataDir = join(dir, "pglite")
      const script = fileURLToPath(new URL("../support/lock-data-dir.ts", import.meta.url))
      const children = Array.from({ length: 6 }, () =>
        spawn(process.execPath, ["--import", "tsx", script, dataDir], { stdio: ["pipe", "pipe", "inherit"] }))
      const exited = children.map((child) =>
        new Promise<void>((resolve) => child.once("exit", () => resolve()))
      )
      // The holder keeps its lock until its stdin ends, so every other one tries while it is held.
      const outcomes = yield* Effect.all(
        children.map((child) =>
          Effect.async<string>((resume) => {
            let output = ""
            let told = false
            const tell = () => {
              if (!told) resume(Effect.succeed(output.trim()))
              told = true
            }
            child.stdout!.on("data", (chunk: Buffer) => {
              output += chunk.toString("utf8")
              if (output.includes("\n")) tell()
            })
            child.once("exit", tell)
          })
        ),
        { concurrency: "unbounded" }
      )
      for (const child of children) child.stdin!.end()
      yield* Effect.promise(() => Promise.all(exited))
      expect(outcomes.sort()).toEqual(["locked", "refused", "refused", "refused", "refused", "refused"])
      expect(existsSync(`${dataDir}.lock`)).toBe(false) // released when its holder exited
      expect(readdirSync(dir)).toEqual([]) // and no temporary file left
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "a data directory that is a file fails the layer with a one-line DatabaseError",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const dataDir = join(dir, "pglite")
        writeFileSync(dataDir, "")
        const message = yield* startFailure(makeDatabaseLayer({ kind: "embedded", dataDir }))
        expect(message).toContain("cannot read the data directory")
        expect(message).toContain("ENOTDIR")
      }).pipe(Effect.scoped),
    60_000
  )
})
