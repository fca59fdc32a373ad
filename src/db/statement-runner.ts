/**
 * How the SQL stores run their statements (`statementRunner(sql)`): a statement of a client made
 * by `pgClientLayer`, run outside a transaction, goes straight to that client's node-postgres
 * pool in one asynchronous step; anything else runs as `@effect/sql` runs it. Either way a driver
 * error comes back as the stores report it (`fromSqlError`).
 *
 * Why: `@effect/sql` runs every statement inside a span of its own (a no-op one while tracing is
 * off, as the service runs) and a scope of its own for the connection: a large share of the
 * server's CPU for a statement (`docs/decisions.md#performance-decisions`), and
 * a checkout runs about ten. Taking a pooled connection, running the text and giving the
 * connection back needs neither: node-postgres does all three around the statement.
 *
 * What stays as the library does it, so a store cannot tell the two apart:
 * - the text and parameters are the statement's own compilation (`compile()`), run through the
 *   pool's clients, so named prepared statements (`pg-client.ts`) apply alike;
 * - rows come back as the library returns them (the client has no row transforms); a text of
 *   several statements gives one array of rows per statement;
 * - errors are the library's `SqlError`s with its messages ("Failed to acquire connection",
 *   "Connection error", "Failed to execute statement") and the driver's error as the cause, so
 *   the store's mapping (`fromSqlError`, or a lost idempotency claim) classifies them the same;
 * - an interrupted statement is cancelled on the server (`pg_cancel_backend`, best effort, as the
 *   library does) before its connection goes back to the pool;
 * - inside `withTransaction` (the fiber holds the transaction's connection), or with a statement
 *   transformer set, the statement runs as the library runs it, on the transaction's connection.
 *
 * The one difference: no `sql.execute` span. The service runs with tracing off
 * (`src/main.ts`); spans of the library's own path are unchanged.
 */
import { SqlClient, SqlError, Statement } from "@effect/sql"
import { Context, Duration, Effect, Option } from "effect"
import type Pg from "pg"
import { fromSqlError, type StorageError } from "./storage-error.ts"

/** Runs a store's statement (or any effect failing with a `SqlError`), failing with a `StorageError`. */
export type StatementRunner = <A>(effect: Effect.Effect<A, SqlError.SqlError>) => Effect.Effect<A, StorageError>

/** The pool of each client `pgClientLayer` made. */
const pools = new WeakMap<SqlClient.SqlClient, Pg.Pool>()

/** Records that `client`'s statements may run on `pool` (called by `pgClientLayer` only). */
export const registerPool = (client: SqlClient.SqlClient, pool: Pg.Pool): void => {
  pools.set(client, pool)
}

/** How long a cancellation may take before the connection is given back anyway. */
const CANCEL_TIMEOUT = Duration.seconds(5)

/** The rows of a node-postgres result, as `@effect/sql-pg` returns them. */
const rowsOf = (result: Pg.QueryResult | ReadonlyArray<Pg.QueryResult>): unknown =>
  Array.isArray(result) ? result.map((r: Pg.QueryResult) => r.rows ?? []) : (result as Pg.QueryResult).rows ?? []

/** Asks the server to stop what `client`'s backend runs; succeeds whatever happens. */
const cancelOn = (pool: Pg.Pool, client: Pg.PoolClient): Effect.Effect<void> => {
  const processId = (client as Pg.PoolClient & { readonly processID?: number }).processID
  if (processId === undefined) return Effect.void
  return Effect.async<void>((resume) => {
    if ((pool as Pg.Pool & { readonly ending?: boolean }).ending) return resume(Effect.void)
    pool.query(`SELECT pg_cancel_backend(${processId})`, () => resume(Effect.void))
  }).pipe(Effect.interruptible, Effect.timeoutOption(CANCEL_TIMEOUT), Effect.asVoid)
}

/** `text` with `params` on a connection of `pool`, given back once the statement ended. */
const runOnPool = (
  pool: Pg.Pool,
  text: string,
  params: ReadonlyArray<unknown>,
  onError: (error: SqlError.SqlError) => StorageError
) =>
  Effect.async<unknown, StorageError>((resume) => {
    const fail = (cause: unknown, message: string) =>
      resume(Effect.fail(onError(new SqlError.SqlError({ cause, message }))))
    let released = false
    let client: Pg.PoolClient | undefined
    const release = (cause?: Error) => {
      if (!released) client?.release(cause)
      released = true
      client?.off("error", onConnectionError)
    }
    function onConnectionError(cause: Error) {
      release(cause)
      fail(cause, "Connection error")
    }
    pool.connect((cause, connected) => {
      if (cause !== undefined && cause !== null) return fail(cause, "Failed to acquire connection")
      if (connected === undefined) return fail(new Error("No client returned"), "Failed to acquire connection")
      if (released) return connected.release()
      client = connected
      connected.once("error", onConnectionError)
      connected.query(text, params as Array<unknown>, (error: Error | null, result: Pg.QueryResult) => {
        release()
        if (error !== null) fail(error, "Failed to execute statement")
        else resume(Effect.succeed(rowsOf(result)))
      })
    })
    // Interrupted: before a connection came, none is kept; while the statement runs, it is
    // cancelled first, so the connection goes back idle.
    return Effect.suspend(() => {
      if (client === undefined || released) {
        release()
        return Effect.void
      }
      return Effect.ensuring(cancelOn(pool, client), Effect.sync(() => release()))
    })
  })

/**
 * The runner of the stores built on `sql`: statements outside a transaction on its pool (above),
 * when `pgClientLayer` made it; everything else as the library runs it. `onError` says what a
 * driver error is to the store (default `fromSqlError`).
 */
export const statementRunner = (
  sql: SqlClient.SqlClient,
  onError: (error: SqlError.SqlError) => StorageError = fromSqlError
): StatementRunner => {
  const pool = pools.get(sql)
  const asLibraryRuns = <A>(effect: Effect.Effect<A, SqlError.SqlError>) => Effect.mapError(effect, onError)
  if (pool === undefined) return asLibraryRuns
  return <A>(effect: Effect.Effect<A, SqlError.SqlError>): Effect.Effect<A, StorageError> => {
    if (!Statement.isFragment(effect)) return asLibraryRuns(effect)
    const statement = effect as unknown as Statement.Statement<unknown>
    return Effect.withFiberRuntime((fiber) => {
      if (
        Option.isSome(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)) ||
        Option.isSome(fiber.getFiberRef(Statement.currentTransformer))
      ) {
        return asLibraryRuns(effect)
      }
      const [text, params] = statement.compile()
      return runOnPool(pool, text, params, onError) as Effect.Effect<A, StorageError>
    })
  }
}
