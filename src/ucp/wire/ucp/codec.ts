/** What a UCP wire codec refuses, and what every version's codec provides. */
import { Data } from "effect"

/** A request its version's schema accepts but this merchant cannot honour as sent → 400 at `param`. */
export class WireRefusal extends Data.TaggedError("UcpWireRefusal")<{
  readonly code: "missing" | "invalid" | "unsupported"
  readonly message: string
  readonly param: string
}> {}
