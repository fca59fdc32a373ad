/**
 * The `@effect/sql-pg` client of every database, over a node-postgres pool whose connections run
 * statements as named prepared statements (`docs/decisions.md#statements-and-storage`): only texts with
 * parameters, from their second run, at most `NAMED_STATEMENTS_PER_POOL` per pool. No statement selects
 * `*`, so a migration adding columns leaves another process's prepared statements valid.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import Pg from "pg"
import { registerPool } from "./statement-runner.ts"

export const NAMED_STATEMENTS_PER_POOL = 200
export const TEXTS_REMEMBERED_PER_POOL = 2_000

export type StatementNames = (text: string) => string | undefined

export const makeStatementNames = (
  named = NAMED_STATEMENTS_PER_POOL,
  remembered = TEXTS_REMEMBERED_PER_POOL
): StatementNames => {
  // A text maps to its name, or to "" while it has run once: one lookup per statement.
  const texts = new Map<string, string>()
  let names = 0
  return (text) => {
    const name = texts.get(text)
    if (name === undefined) {
      if (texts.size < remembered) texts.set(text, "")
      return undefined
    }
    if (name !== "") return name
    if (names >= named) return undefined
    names++
    const given = `s${names}`
    texts.set(text, given)
    return given
  }
}

const clientNaming = (nameOf: StatementNames): typeof Pg.Client =>
  class NamingClient extends Pg.Client {
    override query(...args: Array<any>): any {
      const [text, values, callback] = args
      if (typeof text === "string" && Array.isArray(values) && values.length > 0) {
        const name = nameOf(text)
        if (name !== undefined) return super.query({ name, text, values }, callback)
      }
      return (super.query as (...args: Array<any>) => any)(...args)
    }
  }

export interface PgPoolOptions {
  readonly url: string
  readonly maxConnections: number
  readonly preparedStatements: boolean
  readonly connectTimeoutMillis: number
  /** 0 keeps connections open; default node-postgres's 10 s. */
  readonly idleTimeoutMillis?: number
}

export const pgClientLayer = (
  options: PgPoolOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Layer.scopedContext(
    // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
    Effect.gen(function*() {
      const pool = yield* openPool(options)
      const client = yield* PgClient.fromPool({ acquire: Effect.succeed(pool) })
      registerPool(client, pool)
      return Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    })
  ).pipe(Layer.provide(Reactivity.layer))

const openPool = (options: PgPoolOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new Pg.Pool({
          connectionString: options.url,
          max: options.maxConnections,
          connectionTimeoutMillis: options.connectTimeoutMillis,
          ...(options.idleTimeoutMillis !== undefined ? { idleTimeoutMillis: options.idleTimeoutMillis } : {}),
          application_name: "agentic-checkout",
          ...(options.preparedStatements ? { Client: clientNaming(makeStatementNames()) } : {})
        })
        // An idle connection's error: the pool drops it and the next statement opens another.
        pool.on("error", () => {})
        try {
          await pool.query("SELECT 1")
        } catch (cause) {
          await pool.end().catch(() => undefined)
          throw cause
        }
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1_000))
  )
