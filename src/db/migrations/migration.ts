import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"

/** One schema change, run at most once per database (recorded in `effect_sql_migrations`). */
export type Migration = Effect.Effect<void, unknown, SqlClient.SqlClient>
