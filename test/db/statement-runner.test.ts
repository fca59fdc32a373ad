/**
 * How the SQL stores run statements (`src/db/statement-runner.ts`): outside a transaction on the
 * client's pool in one step, inside one on the transaction's connection, with the library's rows
 * and errors either way; on the embedded store and on PostgreSQL (one test body for both).
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Redacted, Tracer } from "effect"
import { answeringError, claimLost } from "../../src/db/functions/idempotency-store-answer.ts"
import { pgClientLayer } from "../../src/db/pg-client.ts"
import { statementRunner } from "../../src/db/statement-runner.ts"
import { StorageError } from "../../src/db/storage-error.ts"
import { embeddedDatabase, freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const probeTable = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`CREATE TABLE IF NOT EXISTS runner_probe (id text PRIMARY KEY, n int NOT NULL)`
)

const probeIds = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    statementRunner(sql)(sql<{ id: string }>`SELECT id FROM runner_probe ORDER BY id`),
    (rows) => rows.map((row) => row.id)
  ))

/** The names of the spans `effect` starts, with tracing on. */
const spansOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const names: Array<string> = []
    const base = yield* Effect.tracer
    const tracer = Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return base.span(name, ...rest)
      },
      context: base.context
    })
    yield* effect.pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(true))
    return names
  })

const behaviour = (database: () => Layer.Layer<SqlClient.SqlClient, unknown>) => {
  it.live("gives the rows the library gives, for a statement and for a text of several", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const run = statementRunner(sql)
      const statement = sql<{ n: number; word: string }>`SELECT ${41}::int + 1 AS n, ${"forty-two"}::text AS word`
      expect(yield* run(statement)).toEqual([{ n: 42, word: "forty-two" }])
      expect(yield* run(statement)).toEqual(yield* statement)
      expect(yield* run(sql`SELECT 1 AS a WHERE false`)).toEqual([])
      const several = sql.unsafe("SELECT 1 AS a; SELECT 2 AS b")
      expect(yield* run(several)).toEqual([[{ a: 1 }], [{ b: 2 }]])
      expect(yield* run(several)).toEqual(yield* several)
    }).pipe(Effect.provide(database())))

  it.live("inside a transaction runs on its connection: its writes are seen inside and rolled back with it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const run = statementRunner(sql)
      yield* probeTable
      const insert = (id: string) => run(sql`INSERT INTO runner_probe (id, n) VALUES (${id}, 1)`)
      const seenInside = yield* sql.withTransaction(
        Effect.zipRight(insert("rolled-back"), Effect.flatMap(probeIds, (ids) => Effect.fail(ids)))
      ).pipe(Effect.flip)
      expect(seenInside).toEqual(["rolled-back"])
      expect(yield* probeIds).toEqual([])
      yield* sql.withTransaction(insert("committed"))
      yield* insert("alone")
      expect(yield* probeIds).toEqual(["alone", "committed"])
    }).pipe(Effect.provide(database())))

  it.live("fails with the store's error, the driver's error as its cause, and the connection goes on", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const error = yield* Effect.flip(statementRunner(sql)(sql.unsafe("SELEC $1::int AS n", [1])))
      expect(error).toBeInstanceOf(StorageError)
      expect(error.reason).toBe("failure")
      const driverError = (error.cause as { readonly cause?: { readonly code?: string } }).cause
      expect(driverError?.code).toBe("42601") // syntax_error
      // The store's own mapping: a lost idempotency claim is `claimLost`.
      const raise = sql`DO $$ BEGIN RAISE EXCEPTION 'lost' USING ERRCODE = 'IK001'; END $$`
      expect(yield* Effect.flip(statementRunner(sql, answeringError)(raise))).toBe(claimLost)
      expect(yield* statementRunner(sql)(sql<{ n: number }>`SELECT ${6}::int * 7 AS n`)).toEqual([{ n: 42 }])
    }).pipe(Effect.provide(database())))

  it.live("starts no span of its own, where the library's path starts `sql.execute`", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* spansOf(statementRunner(sql)(sql`SELECT 1 AS one`))).toEqual([])
      expect(yield* spansOf(sql`SELECT 1 AS one`)).toEqual(["sql.execute"])
      // In a transaction the statement is the library's, on the transaction's connection.
      const inTransaction = yield* spansOf(sql.withTransaction(statementRunner(sql)(sql`SELECT 1 AS one`)))
      expect(inTransaction).toContain("sql.execute")
    }).pipe(Effect.provide(database())))
}

describe("the stores' statement runner", () => {
  describe("on the embedded store", () => behaviour(() => embeddedDatabase()))

  const postgres = (maxConnections: number) =>
    Layer.unwrapScoped(Effect.map(
      freshPostgresDatabaseUrl,
      (url) => pgClientLayer({ url, maxConnections, preparedStatements: true, connectTimeoutMillis: 5_000 })
    ))

  describe.skipIf(!hasPostgres)("on PostgreSQL", () => {
    behaviour(() => postgres(2))

    it.live("an interrupted statement is cancelled on the server, and its connection serves the next", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const run = statementRunner(sql)
        const sleeping = sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT pg_sleep(%'`
        const fiber = yield* Effect.fork(run(sql`SELECT pg_sleep(${30})`))
        while ((yield* run(sleeping))[0]!.n === 0) yield* Effect.sleep("20 millis")
        expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
        expect((yield* run(sleeping))[0]!.n).toBe(0)
        // Both connections of the pool are free: two statements at once finish.
        const [a, b] = yield* Effect.all([run(sql`SELECT 1 AS n`), run(sql`SELECT 2 AS n`)], { concurrency: 2 })
        expect([a, b]).toEqual([[{ n: 1 }], [{ n: 2 }]])
      }).pipe(Effect.timeout("20 seconds"), Effect.provide(postgres(2))))

    it.live("on a client not made by the service's layer, runs as the library does", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const run = statementRunner(sql)
        expect(yield* run(sql<{ n: number }>`SELECT ${2}::int AS n`)).toEqual([{ n: 2 }])
        expect(yield* spansOf(run(sql`SELECT 1 AS one`))).toEqual(["sql.execute"])
        const error = yield* Effect.flip(run(sql.unsafe("SELEC 1")))
        expect(error).toBeInstanceOf(StorageError)
      }).pipe(
        Effect.provide(Layer.unwrapScoped(Effect.map(
          freshPostgresDatabaseUrl,
          (url) => PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
        )))
      ))
  })
})
