/**
 * How the SQL stores run statements: outside a transaction, a statement of a `pgClientLayer` client goes
 * straight to its node-postgres pool in one asynchronous step, without the span and scope `@effect/sql`
 * makes per statement (`docs/decisions.md#statements-and-storage`). Rows, `SqlError`s and the cancel of
 * an interrupted statement are the library's; in a transaction or under a statement transformer, the
 * library runs the statement.
 */
import { SqlClient, SqlError, Statement } from "@effect/sql"
import { Context, Duration, Effect, Option } from "effect"
import type Pg from "pg"
import { fromSqlError, type StorageError } from "./storage-error.ts"

export type StatementRunner = <A>(effect: Effect.Effect<A, SqlError.SqlError>) => Effect.Effect<A, StorageError>

const pools = new WeakMap<SqlClient.SqlClient, Pg.Pool>()

export const registerPool = (client: SqlClient.SqlClient, pool: Pg.Pool): void => {
  pools.set(client, pool)
}

const CANCEL_TIMEOUT = Duration.seconds(5)

const rowsOf = (result: Pg.QueryResult | ReadonlyArray<Pg.QueryResult>): unknown =>
  Array.isArray(result) ? result.map((r: Pg.QueryResult) => r.rows ?? []) : (result as Pg.QueryResult).rows ?? []

const cancelOn = (pool: Pg.Pool, client: Pg.PoolClient): Effect.Effect<void> => {
  const processId = (client as Pg.PoolClient & { readonly processID?: number }).processID
  if (processId === undefined) return Effect.void
  return Effect.async<void>((resume) => {
    if ((pool as Pg.Pool & { readonly ending?: boolean }).ending) return resume(Effect.void)
    pool.query(`SELECT pg_cancel_backend(${processId})`, () => resume(Effect.void))
  }).pipe(Effect.interruptible, Effect.timeoutOption(CANCEL_TIMEOUT), Effect.asVoid)
}

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
    // Interrupted mid-statement: cancelled first, so that the connection goes back idle.
    return Effect.suspend(() => {
      if (client === undefined || released) {
        release()
        return Effect.void
      }
      return Effect.ensuring(cancelOn(pool, client), Effect.sync(() => release()))
    })
  })

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
