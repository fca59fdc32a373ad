export const iso = (epochMillis: number): string => new Date(epochMillis).toISOString()

/** A `bigint` or numeric column (node-postgres returns `bigint` as a string) as epoch milliseconds. */
export const millis = (value: number | string): number => Math.round(Number(value))

/** `json` and `jsonb` arrive parsed from node-postgres; accept text too, for other drivers. */
export const jsonValue = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)
