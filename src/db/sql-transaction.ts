import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { fromSqlError, type StorageError } from "./storage-error.ts"

const SqlErrorClass = SqlError.SqlError

class Inner<E> {
  constructor(readonly error: E) {}
}

/**
 * `sql.withTransaction` with the stores' error rules (nested, a savepoint): a failing BEGIN, COMMIT or
 * ROLLBACK is a `StorageError`. Uninterruptible: an interrupted statement is cancelled over another
 * connection while this one keeps its row locks, and transactions waiting on them fill the pool.
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
