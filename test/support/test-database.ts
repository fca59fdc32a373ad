/**
 * Databases for tests.
 *
 * - `embeddedDatabase()`: PGlite in this process, migrated; in memory by default (nothing to clean), or in a
 *   fresh temporary directory removed at scope end with `{ persistent: true }`. Each is a database
 *   of its own (its own PGlite, its own session), loaded from a dump of an already migrated PGlite
 *   made once per test process (`migratedTemplate`), itself made from a dump of a freshly initialized
 *   PGlite cached in the OS temp directory (keyed by the PGlite version): PGlite's initdb (5–15 s)
 *   once per machine, the migrations (1–2 s) once per test worker, then about half a second per
 *   database. The migrations still run on each database as the service opens it, and find
 *   everything applied (`test/db/` tests them on fresh databases).
 * - `postgresDatabase()`: a fresh `test_<random>` database on the server of `TEST_DATABASE_URL`,
 *   migrated, dropped `WITH (FORCE)` at scope end.
 * - `hasPostgres`: whether `TEST_DATABASE_URL` is set, for `describe.skipIf(!hasPostgres)`.
 * - `atMigrationsBefore` and `migratedPostgres`: a migration's test, the rows of the release before
 *   it and then the database as the service opens it.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { NodeContext } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import * as Migrator from "@effect/sql/Migrator"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type DatabaseError, makeDatabaseLayer } from "../../src/db/database.ts"
import { initializeDataDir, PGLITE_SETTINGS } from "../../src/db/embedded-database.ts"
import { migrations, migrationsLoader } from "../../src/db/migrations/index.ts"
import { pgClientLayer } from "../../src/db/pg-client.ts"
import { applySqlFunctions } from "../../src/db/sql-functions.ts"

const rawTestDatabaseUrl = process.env["TEST_DATABASE_URL"]?.trim()

/** `TEST_DATABASE_URL`, when set and not empty. */
export const testDatabaseUrl: string | undefined = rawTestDatabaseUrl === "" ? undefined : rawTestDatabaseUrl

export const hasPostgres: boolean = testDatabaseUrl !== undefined

export type TestDatabase = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseError>

/** A temporary directory, removed when the scope closes. */
export const tempDirectory = (prefix = "acp-test-") =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const pgliteVersion = (): string => {
  try {
    const file = new URL("../../node_modules/@electric-sql/pglite/package.json", import.meta.url)
    return String((JSON.parse(readFileSync(file, "utf8")) as { version?: unknown }).version ?? "unknown")
  } catch {
    return "unknown"
  }
}

const GZIP = "application/x-gzip"

/** A dump of a freshly initialized (not migrated) PGlite, made once and cached on disk. */
export const pgliteTemplate: Effect.Effect<Blob> = Effect.promise(async () => {
  const path = join(tmpdir(), `acp-pglite-template-${pgliteVersion()}.tar.gz`)
  if (existsSync(path)) return new Blob([readFileSync(path)], { type: GZIP })
  const db = await PGlite.create()
  const dump = await db.dumpDataDir("gzip")
  await db.close()
  const bytes = Buffer.from(await dump.arrayBuffer())
  const partial = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`
  writeFileSync(partial, bytes)
  renameSync(partial, path) // atomic: concurrent test workers never read half a file
  return new Blob([bytes], { type: GZIP })
})

/**
 * Copies a freshly initialized (not migrated) PGlite data directory to `target`, as a server's
 * first start would make it: made once by the server's own initialization and cached on disk
 * (keyed by the PGlite version), which turns a server process's first start on the embedded
 * store from ≈ 10 s of initdb into a copy.
 */
export const copyInitializedDataDir = (target: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    const cached = join(tmpdir(), `acp-pglite-datadir-${pgliteVersion()}`)
    if (!existsSync(cached)) {
      const partial = `${cached}.${process.pid}.${randomBytes(4).toString("hex")}`
      yield* initializeDataDir(partial).pipe(Effect.orDie)
      try {
        renameSync(partial, cached) // atomic: concurrent test workers never copy half a directory
      } catch {
        rmSync(partial, { recursive: true, force: true }) // another worker was first
      }
    }
    cpSync(cached, target, { recursive: true })
  })

/**
 * Migrates a PGlite loaded from `initialized` as the service migrates the embedded store (the
 * migrations, then the SQL functions, over its socket server) and dumps it, uncompressed (a load
 * then skips the gunzip).
 */
const makeMigratedDump = (initialized: Blob): Promise<Blob> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() =>
        PGlite.create({ loadDataDir: initialized, startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS] })
      ),
      (db) => Effect.promise(() => db.close())
    )
    yield* Effect.scoped(Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
          await server.start()
          return server
        }),
        (server) => Effect.promise(() => server.stop())
      )
      yield* Effect.zipRight(PgMigrator.run({ loader: migrationsLoader }), applySqlFunctions()).pipe(
        Effect.provide(Layer.merge(
          pgClientLayer({
            url: `postgres://postgres@${server.getServerConn()}/postgres`,
            maxConnections: 1,
            preparedStatements: true,
            connectTimeoutMillis: 5_000
          }),
          NodeContext.layer
        )),
        Effect.orDie
      )
    }))
    return yield* Effect.promise(() => db.dumpDataDir("none"))
  })))

/** The dump `embeddedDatabase` starts from, made once per test process (a worker runs many files). */
let migratedDump: Promise<Blob> | undefined

/** A dump of a migrated PGlite (see the module comment). */
export const migratedTemplate: Effect.Effect<Blob> = Effect.flatMap(
  pgliteTemplate,
  (initialized) =>
    Effect.promise(() => {
      migratedDump ??= makeMigratedDump(initialized).catch((error: unknown) => {
        migratedDump = undefined // the next database tries again
        throw error
      })
      return migratedDump
    })
)

/** Migrated PGlite behind its socket server: in memory, or `{ persistent: true }` in a temp dir. */
export const embeddedDatabase = (options?: { readonly persistent?: boolean }): TestDatabase =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const loadDataDir = yield* migratedTemplate
    // In this process: a process per database would cost a second per test (the database
    // process itself is tested in test/db/embedded-database.test.ts).
    if (options?.persistent !== true) return makeDatabaseLayer({ kind: "embedded", loadDataDir, inProcess: true })
    const dir = yield* tempDirectory("acp-pglite-")
    return makeDatabaseLayer({ kind: "embedded", dataDir: join(dir, "pglite"), loadDataDir, inProcess: true })
  }))

/** A fresh, empty database on the `TEST_DATABASE_URL` server, dropped at scope end; its URL. */
export const freshPostgresDatabaseUrl = Effect.gen(function*() {
  if (testDatabaseUrl === undefined) return yield* Effect.dieMessage("TEST_DATABASE_URL is not set")
  const admin = yield* PgClient.make({ url: Redacted.make(testDatabaseUrl), maxConnections: 1 }).pipe(
    Effect.provide(Reactivity.layer),
    Effect.orDie
  )
  const name = `test_${randomBytes(6).toString("hex")}`
  yield* Effect.acquireRelease(
    admin`CREATE DATABASE ${admin(name)}`.pipe(Effect.orDie),
    () => admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(Effect.ignoreLogged)
  )
  const url = new URL(testDatabaseUrl)
  url.pathname = `/${name}`
  return url.toString()
})

/** A fresh, migrated database on the `TEST_DATABASE_URL` server, dropped afterwards. */
export const postgresDatabase = (options?: { readonly poolSize?: number }): TestDatabase =>
  Layer.unwrapScoped(
    Effect.map(freshPostgresDatabaseUrl, (url) =>
      makeDatabaseLayer({
        kind: "postgres",
        url: Redacted.make(url),
        poolSize: options?.poolSize ?? 10,
        source: "TEST_DATABASE_URL"
      }))
  )

/**
 * Runs `setup` on the database at `url` migrated by the migrations before `id` alone (one
 * connection, no SQL functions): what a release before migration `id` stored, for its test.
 */
export const atMigrationsBefore = <A, E>(
  url: string,
  id: string,
  setup: Effect.Effect<A, E, SqlClient.SqlClient>
) =>
  Effect.zipRight(
    PgMigrator.run({
      loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([name]) => name < id)))
    }),
    setup
  ).pipe(
    Effect.provide(Layer.merge(
      Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }), Reactivity.layer),
      NodeContext.layer
    ))
  )

/** The database at `url` as the service opens it: every migration, then the SQL functions. */
export const migratedPostgres = (url: string) =>
  makeDatabaseLayer({ kind: "postgres", url: Redacted.make(url), poolSize: 2, source: "TEST_DATABASE_URL" }).pipe(
    Layer.orDie
  )
