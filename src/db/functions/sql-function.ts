/**
 * One SQL function. Those setting `plan_cache_mode = force_generic_plan` never change a statement's shape,
 * and PostgreSQL would otherwise plan `= ANY` of an array parameter anew on every call, dearer than the run.
 */
export interface SqlFunction {
  readonly name: string
  readonly version: number
  readonly definition: string
}
