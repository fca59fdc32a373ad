/** The database layer: configuration, start-up errors, persistence of the embedded PGlite. */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Context, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { existsSync, mkdirSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { DatabaseError, DatabaseLive, databaseOptionsConfig, makeDatabaseLayer } from "../../src/db/database.ts"
import { migrations as allMigrations } from "../../src/db/migrations/index.ts"
import { fromSqlError } from "../../src/db/storage-error.ts"
import { makeSession } from "../checkout/checkout-store-fixtures.ts"
import {
  hasPostgres,
  pgliteTemplate,
  postgresDatabase,
  tempDirectory,
  testDatabaseUrl
} from "../support/test-database.ts"

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromJson(env))

describe("database layer", () => {
  it.live("DATABASE_URL selects PostgreSQL; otherwise PGlite in DATA_DIR/pglite", () =>
    Effect.gen(function*() {
      const pg = yield* databaseOptionsConfig.pipe(withEnv({ DATABASE_URL: "postgres://u:p@db:5432/x" }))
      expect(pg.kind).toBe("postgres")
      expect(pg.kind === "postgres" && Redacted.value(pg.url)).toBe("postgres://u:p@db:5432/x")
      expect(pg.kind === "postgres" && pg.poolSize).toBe(10)
      const sized = yield* databaseOptionsConfig.pipe(
        withEnv({ DATABASE_URL: "postgres://db/x", DATABASE_POOL_SIZE: "3" })
      )
      expect(sized.kind === "postgres" && sized.poolSize).toBe(3)
      expect(pg.kind === "postgres" && pg.preparedStatements).toBe(true)
      const unprepared = yield* databaseOptionsConfig.pipe(
        withEnv({ DATABASE_URL: "postgres://db/x", DATABASE_PREPARED_STATEMENTS: "false" })
      )
      expect(unprepared.kind === "postgres" && unprepared.preparedStatements).toBe(false)
      const notBoolean = yield* Effect.flip(
        databaseOptionsConfig.pipe(withEnv({ DATABASE_URL: "postgres://db/x", DATABASE_PREPARED_STATEMENTS: "maybe" }))
      )
      expect(String(notBoolean)).toContain("DATABASE_PREPARED_STATEMENTS")
      expect(yield* databaseOptionsConfig.pipe(withEnv({}))).toEqual({
        kind: "embedded",
        dataDir: join("./data", "pglite")
      })
      expect(yield* databaseOptionsConfig.pipe(withEnv({ DATABASE_URL: "", DATA_DIR: "/var/acp" }))).toEqual({
        kind: "embedded",
        dataDir: "/var/acp/pglite"
      })
      const bad = yield* Effect.flip(databaseOptionsConfig.pipe(withEnv({ DATABASE_POOL_SIZE: "0" })))
      expect(String(bad)).toContain("DATABASE_POOL_SIZE")
    }))

  it.live("an unreachable DATABASE_URL fails the layer with a one-line DatabaseError", () =>
    Effect.gen(function*() {
      const error = yield* Layer.build(DatabaseLive).pipe(
        Effect.scoped,
        withEnv({ DATABASE_URL: "postgres://postgres:s3cret@127.0.0.1:1/nowhere" }),
        Effect.flip
      )
      expect(error).toBeInstanceOf(DatabaseError)
      expect(error.message).toContain("DATABASE_URL")
      expect(error.message).toContain("127.0.0.1:1/nowhere")
      expect(error.message).toContain("ECONNREFUSED")
      expect(error.message).not.toContain("s3cret")
      expect(error.message).not.toContain("\n")
      const pretty = Cause.pretty(Cause.fail(error))
      expect(pretty).not.toMatch(/node_modules/)
    }))

  it.live("the embedded database persists in its directory and migrates once", () =>
    Effect.gen(function*() {
      const dir = yield* tempDirectory()
      const dataDir = join(dir, "nested", "data", "pglite") // parents do not exist yet
      const loadDataDir = yield* pgliteTemplate
      const database = makeDatabaseLayer({ kind: "embedded", dataDir, loadDataDir })
      const session = makeSession("cs_persisted")

      yield* Effect.flatMap(CheckoutStore, (store) => store.sessions.insert(session)).pipe(
        Effect.provide(SqlCheckoutStore.pipe(Layer.provideMerge(database)))
      )
      expect(existsSync(dataDir)).toBe(true)

      const [read, migrations] = yield* Effect.gen(function*() {
        const store = yield* CheckoutStore
        const sql = yield* SqlClient.SqlClient
        const read = yield* store.sessions.get(session.id)
        const migrations = yield* sql<{ name: string }>`SELECT name FROM effect_sql_migrations`
        return [read, migrations] as const
      }).pipe(Effect.provide(SqlCheckoutStore.pipe(Layer.provideMerge(database))))
      expect(read).toEqual(Option.some(session))
      // Each migration recorded once, although the layer was built twice.
      expect(migrations.map((row) => row.name).sort()).toEqual(
        Object.keys(allMigrations).map((key) => key.replace(/^\d+_/, "")).sort()
      )
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "a new data directory (missing or empty) is initialized, then opened and migrated",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const missing = join(dir, "missing", "pglite")
        const empty = join(dir, "empty")
        mkdirSync(empty)
        for (const dataDir of [missing, empty]) {
          const [row] = yield* Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM effect_sql_migrations`
          ).pipe(Effect.provide(makeDatabaseLayer({ kind: "embedded", dataDir })))
          expect(row!.n).toBe(Object.keys(allMigrations).length)
          expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true)
        }
        // Nothing of the staging directories is left next to the data directories.
        expect(readdirSync(dir).sort()).toEqual(["empty", "missing"])
        expect(readdirSync(join(dir, "missing"))).toEqual(["pglite"])
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a first start stopped during the initialization leaves no data directory behind",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        const dataDir = join(dir, "pglite")
        const starting = yield* Effect.fork(
          Layer.build(makeDatabaseLayer({ kind: "embedded", dataDir })).pipe(Effect.scoped)
        )
        // The initialization takes seconds; stop it once its staging directory exists.
        yield* Effect.sleep("100 millis").pipe(
          Effect.repeat({ until: () => readdirSync(dir).includes("pglite.initializing"), times: 100 })
        )
        expect(readdirSync(dir).sort()).toEqual(["pglite.initializing", "pglite.lock"])
        yield* Fiber.interrupt(starting)
        expect(readdirSync(dir)).toEqual([]) // the staging directory and the lock are gone
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a data directory that cannot be initialized fails the layer with a one-line DatabaseError",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDirectory()
        // A name the file system accepts to test for but not to create (over 255 bytes with the
        // staging suffix): the initialization itself fails.
        const dataDir = join(dir, "p".repeat(250))
        const error = yield* Layer.build(makeDatabaseLayer({ kind: "embedded", dataDir })).pipe(Effect.flip)
        expect(error).toBeInstanceOf(DatabaseError)
        expect(error.message).toContain("Cannot open the embedded database (PGlite)")
        expect(error.message).toContain("initializing the data directory exited with 1")
        expect(error.message).toContain("ENAMETOOLONG")
        expect(error.message).not.toContain("\n")
        expect(readdirSync(dir)).toEqual([])
      }).pipe(Effect.scoped),
    60_000
  )
})

describe("SqlError → StorageError", () => {
  const reason = (cause: unknown, message?: string) =>
    fromSqlError(new SqlError.SqlError(message === undefined ? { cause } : { cause, message })).reason

  it("connection problems are unavailable, the rest failures", () => {
    expect(reason(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }))).toBe(
      "unavailable"
    )
    expect(reason(Object.assign(new AggregateError([Object.assign(new Error("x"), { code: "ECONNRESET" })], "")))).toBe(
      "unavailable"
    )
    expect(reason(new Error("Connection terminated unexpectedly"))).toBe("unavailable")
    expect(reason(new Error("timeout"), "Failed to acquire connection for transaction")).toBe("unavailable")
    for (const code of ["08006", "08P01", "57P01", "57P02", "57P03", "53300"]) {
      expect(reason(Object.assign(new Error("pg"), { code }))).toBe("unavailable")
    }
    expect(reason(Object.assign(new Error("duplicate key value"), { code: "23505" }), "Failed to execute statement"))
      .toBe("failure")
    expect(reason(Object.assign(new Error("syntax error"), { code: "42601" }))).toBe("failure")
  })
})

describe.skipIf(!hasPostgres)("PostgreSQL connection loss", () => {
  it.live("a killed connection is reported as unavailable, and the pool recovers", () =>
    Effect.gen(function*() {
      const admin = yield* PgClient.make({ url: Redacted.make(testDatabaseUrl!), maxConnections: 1 }).pipe(
        Effect.provide(Reactivity.layer)
      )
      const store = yield* CheckoutStore
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ name: string }>`SELECT current_database() AS name`
      const name = row!.name
      const error = yield* Effect.flip(store.transaction(Effect.gen(function*() {
        yield* store.sessions.get("cs_any")
        // Any SqlClient's statement inside a transaction runs on that transaction's connection
        // (the tag is shared), so the admin query must leave the transaction context.
        const killed = yield* admin<{ pid: number }>`SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = ${name}`.pipe(
          Effect.mapInputContext((context: Context.Context<never>) =>
            Context.omit(SqlClient.TransactionConnection)(context) as Context.Context<never>
          )
        )
        expect(killed.length).toBeGreaterThan(0)
        yield* Effect.sleep("50 millis")
        yield* store.sessions.get("cs_any")
      })))
      expect(error).toMatchObject({ _tag: "StorageError", reason: "unavailable" })
      yield* store.ping
    }).pipe(
      Effect.scoped,
      Effect.provide(SqlCheckoutStore.pipe(Layer.provideMerge(postgresDatabase({ poolSize: 2 }))))
    ), 60_000)
})
