/**
 * One SQL function: its name, the version of its body and its `CREATE OR REPLACE FUNCTION` statement.
 *
 * The PL/pgSQL functions run with `plan_cache_mode = force_generic_plan`: their statements never
 * change shape, and left to itself PostgreSQL plans a statement with `= ANY` of an array parameter
 * anew on every call (it guesses ten elements, so the cached plan always looks dearer), which cost
 * more than running the statements. `enable_seqscan = off` keeps those plans on the indexes
 * whatever the tables' statistics say.
 */
export interface SqlFunction {
  readonly name: string
  readonly version: number
  readonly definition: string
}
