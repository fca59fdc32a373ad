/**
 * The service's PostgreSQL client (`src/db/pg-client.ts`): statements with parameters run as named
 * prepared statements from their second execution, seen through PostgreSQL's own
 * `pg_prepared_statements` on the one connection of a pool of one, on the embedded store and on
 * PostgreSQL (one test body for both).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { DatabaseLive } from "../../src/db/database.ts"
import { makeStatementNames, pgClientLayer } from "../../src/db/pg-client.ts"
import { embeddedDatabase, freshPostgresDatabaseUrl, hasPostgres } from "../support/test-database.ts"

const SQUARE = "SELECT $1::int * $1::int AS square"

/** The texts this session has prepared, by name (protocol-level statements only). */
const prepared = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ name: string; statement: string }>`
    SELECT name, statement FROM pg_prepared_statements WHERE NOT from_sql ORDER BY name`.pipe(
    Effect.map((rows) => rows.map((row) => [row.name, row.statement] as const))
  ))

const square = (n: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ square: number }>(SQUARE, [n])).pipe(
    Effect.map((rows) => rows[0]?.square)
  )

const behaviour = (database: () => Layer.Layer<SqlClient.SqlClient, unknown>) => {
  it.live("a statement is prepared from its second execution on, once, under one name", () =>
    Effect.gen(function*() {
      expect(yield* square(3)).toBe(9)
      expect((yield* prepared).filter(([, text]) => text === SQUARE)).toEqual([])
      expect(yield* square(4)).toBe(16)
      expect(yield* square(5)).toBe(25)
      const named = (yield* prepared).filter(([, text]) => text === SQUARE)
      expect(named).toHaveLength(1)
      expect(named[0]?.[0]).toMatch(/^s\d+$/)
    }).pipe(Effect.provide(database())))

  it.live("a statement without parameters is never prepared", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 3; i++) expect(yield* sql`SELECT 41 + 1 AS answer`).toEqual([{ answer: 42 }])
      expect((yield* prepared).filter(([, text]) => text.includes("41 + 1"))).toEqual([])
    }).pipe(Effect.provide(database())))

  it.live("a text that fails to parse fails every time with its own error, and the connection goes on", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const broken = sql.unsafe("SELEC $1::int AS n", [1])
      for (let i = 0; i < 3; i++) {
        const error = yield* Effect.flip(broken)
        expect((error.cause as { code?: string }).code).toBe("42601") // syntax_error, never "does not exist"
      }
      expect((yield* prepared).filter(([, text]) => text.startsWith("SELEC "))).toEqual([])
      expect(yield* square(6)).toBe(36)
    }).pipe(Effect.provide(database())))

  it.live("a statement prepared in a transaction that rolls back stays usable after it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(
        Effect.zipRight(Effect.zipRight(square(2), square(2)), Effect.fail("roll back" as const))
      ).pipe(Effect.flip)
      expect((yield* prepared).filter(([, text]) => text === SQUARE)).toHaveLength(1)
      expect(yield* square(7)).toBe(49)
      expect(yield* sql.withTransaction(square(8))).toBe(64)
    }).pipe(Effect.provide(database())))
}

describe("the PostgreSQL client: prepared statements", () => {
  describe("on the embedded store", () => behaviour(() => embeddedDatabase()))

  describe.skipIf(!hasPostgres)(
    "on PostgreSQL (a pool of one, on a fresh database)",
    () =>
      behaviour(() =>
        Layer.unwrapScoped(Effect.map(
          freshPostgresDatabaseUrl,
          (url) => pgClientLayer({ url, maxConnections: 1, preparedStatements: true, connectTimeoutMillis: 5_000 })
        ))
      )
  )

  describe.skipIf(!hasPostgres)("on PostgreSQL with DATABASE_PREPARED_STATEMENTS=false", () => {
    it.live("no statement is ever prepared", () =>
      Effect.gen(function*() {
        for (let n = 1; n <= 3; n++) expect(yield* square(n)).toBe(n * n)
        expect(yield* prepared).toEqual([])
      }).pipe(
        Effect.provide(Layer.unwrapScoped(Effect.map(freshPostgresDatabaseUrl, (url) =>
          DatabaseLive.pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({
              DATABASE_URL: url,
              DATABASE_POOL_SIZE: "1",
              DATABASE_PREPARED_STATEMENTS: "false"
            })))
          ))))
      ))
  })

  it("no statement the service sends selects or returns `*`: a column added by another process leaves its plans valid", () => {
    // A prepared statement whose result columns change fails ("cached plan must not change result
    // type"); named columns never change when a migration adds one. SQL function bodies and
    // migrations are not statements the client prepares.
    const star = /\b(?:SELECT|RETURNING)\s+(?:\w+\.)?\*|,\s*\w+\.\*/i
    const offenders = readdirSync(SRC, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !/^db\/(?:functions|migrations)\//.test(file))
      .filter((file) => star.test(readFileSync(join(SRC, file), "utf8")))
    expect(offenders).toEqual([])
    // The check finds what it looks for.
    expect(star.test("SELECT * FROM t")).toBe(true)
    expect(star.test("RETURNING t.*")).toBe(true)
    expect(star.test("SELECT a, t.* FROM t")).toBe(true)
    expect(star.test("SELECT count(*) AS n FROM t")).toBe(false)
  })

  it("names a text from its second use, at most `named` texts, remembering at most `remembered`", () => {
    const nameOf = makeStatementNames(2, 3)
    expect(nameOf("a")).toBeUndefined()
    expect(nameOf("a")).toBe("s1")
    expect(nameOf("a")).toBe("s1")
    expect(nameOf("b")).toBeUndefined()
    expect(nameOf("c")).toBeUndefined()
    expect(nameOf("b")).toBe("s2")
    // Two names given: c, seen before, stays unnamed.
    expect(nameOf("c")).toBeUndefined()
    expect(nameOf("c")).toBeUndefined()
    // Three texts remembered (a, b, c): d is never remembered, so never named.
    const roomy = makeStatementNames(10, 3)
    for (const text of ["a", "b", "c", "d", "d", "d"]) roomy(text)
    expect(roomy("d")).toBeUndefined()
    expect(roomy("a")).toBe("s1")
  })
})

const SRC = join(import.meta.dirname, "..", "..", "src")
