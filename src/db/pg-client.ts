/**
 * The `@effect/sql-pg` client of every database the service opens (PostgreSQL, and the embedded
 * PGlite behind its socket server), over a node-postgres pool made here (`PgClient.layerFromPool`)
 * rather than by `PgClient.layer`, for one difference: its connections run the service's
 * statements as named prepared statements (unless `DATABASE_PREPARED_STATEMENTS` is false, for a
 * connection pooler that cannot carry them from one client's transaction to the next).
 *
 * `@effect/sql-pg` sends every statement unnamed, so PostgreSQL parses, analyses and plans its
 * text on every execution; for the multi-table statements of a checkout that is a large part of
 * what PostgreSQL spends on them. A named statement is parsed once per connection, and PostgreSQL's
 * plan cache decides when a plan can be reused (`plan_cache_mode`, as for the service's SQL
 * functions). The texts are the code's own statement templates with `$n` parameters, so a
 * connection keeps a few dozen of them:
 *
 * - only a statement with parameters is named (without, node-postgres runs it with the simple
 *   protocol, as before: several statements in one text, as in migrations);
 * - a text is named from its second execution on: a text run once (a migration) is never kept;
 * - a pool names at most `NAMED_STATEMENTS_PER_POOL` texts and remembers at most
 *   `TEXTS_REMEMBERED_PER_POOL` texts seen once (lists of varying length make texts that differ by
 *   length): what a connection keeps is bounded whatever the code sends; other texts run unnamed.
 *
 * node-postgres prepares a name on a connection once, when PostgreSQL confirmed the parse; a
 * statement that failed to parse is parsed again on its next execution. Prepared statements are
 * not transactional: one prepared in a transaction that rolls back stays prepared. A statement's
 * result columns are always named, never `*` (a test reads `src/` for it), so a migration adding
 * columns in another process leaves this one's prepared statements valid.
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

/** The name to run a statement's text under, or undefined to run it unnamed. */
export type StatementNames = (text: string) => string | undefined

/** Names for one pool: `s1`, `s2`, … to texts run a second time, within the bounds above. */
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

/** A node-postgres client that runs `query(text, values, callback)` as a named statement when `nameOf` names it. */
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
  /** Run statements as named prepared statements (above); false: every statement unnamed. */
  readonly preparedStatements: boolean
  /** How long opening a connection may take. */
  readonly connectTimeoutMillis: number
  /** Close a connection idle this long; 0 keeps connections open. Default: node-postgres's (10 s). */
  readonly idleTimeoutMillis?: number
}

/**
 * `PgClient` and `SqlClient` over a pool of `NamingClient`s, opened once with `SELECT 1` (so that
 * an unreachable database fails here, as `PgClient.layer` does) and ended with the layer. The
 * stores built on this client run their statements outside transactions on the pool itself
 * (`statement-runner.ts`).
 */
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

/** The pool, opened once with `SELECT 1`, ended with the scope. */
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
        // An idle connection's error: the pool drops it, and the next statement opens another.
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
