/** One SQL function: its name, the version of its body and its `CREATE OR REPLACE FUNCTION` statement. */
export interface SqlFunction {
  readonly name: string
  readonly version: number
  readonly definition: string
}
