/** Request headers that every bearer-authenticated route declares, for the documentation. */
import { Schema } from "effect"
import { optional } from "../../shared/schema-helpers.ts"

/** `API-Version` is enforced by the `ApiVersion` middleware; the others are optional. */
export const ApiHeaders = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "API version date, YYYY-MM-DD" }),
  "idempotency-key": optional(Schema.String.annotations({ description: "Makes a POST safe to retry" })),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" }))
})

/** A page size in a query string. */
export const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500))
