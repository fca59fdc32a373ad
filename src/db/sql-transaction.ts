/** The transaction wrapper every SQL store shares. */
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { fromSqlError, type StorageError } from "./storage-error.ts"

const SqlErrorClass = SqlError.SqlError

class Inner<E> {
  constructor(readonly error: E) {}
}

/**
 * `sql.withTransaction` with the store's error rules, shared by every SQL store (they all use one
 * `SqlClient`, so a call inside another store's transaction becomes a savepoint of it):
 * - the effect's own failures are wrapped on the way through, so that a SqlError of BEGIN (or a
 *   savepoint) is told apart from them; `withTransaction` turns a failing COMMIT or ROLLBACK into
 *   a defect (e.g. the connection was lost): those become StorageError too;
 * - uninterruptible: a transaction runs to its COMMIT or ROLLBACK even when its request is
 *   interrupted (client gone). Interrupting a statement makes @effect/sql-pg cancel it through
 *   another pool connection while the transaction keeps its own, row locks held; under load the
 *   pool filled with transactions waiting on those locks and everything stalled.
 */
export const sqlTransaction =
  (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    effect.pipe(
      Effect.mapError((error) => new Inner(error)),
      sql.withTransaction,
      Effect.catchAll((error) => Effect.fail(error instanceof Inner ? error.error : fromSqlError(error))),
      Effect.catchSomeDefect((defect) =>
        defect instanceof SqlErrorClass ? Option.some(Effect.fail(fromSqlError(defect))) : Option.none()
      ),
      Effect.uninterruptible
    )
