import { Schema } from "effect"
import { optional } from "../../shared/schema-helpers.ts"

/** Request headers of every bearer-authenticated route, for the documentation; only `api-version` is required. */
export const ApiHeaders = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "API version date, YYYY-MM-DD" }),
  "idempotency-key": optional(Schema.String.annotations({ description: "Makes a POST safe to retry" })),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" }))
})

export const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500))
