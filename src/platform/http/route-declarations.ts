/** Route-group annotations (`group.annotate(Idempotent, true)`), read once at start by `route-table.ts`. */
import { Context } from "effect"

/** The error object a group's routes answer in, each with its closed set of codes; default `checkout`. */
export type ErrorFamilyName = "checkout" | "delegate" | "delegate_authentication"

export class ErrorFamily extends Context.Tag("acp/ErrorFamily")<ErrorFamily, ErrorFamilyName>() {}

/** The group's POSTs are idempotent (CONTRACT §6), scoped to the caller's API key: it must authenticate. */
export class Idempotent extends Context.Tag("acp/Idempotent")<Idempotent, boolean>() {}

/** Idempotency rules of the request's `API-Version` (`src/idempotency/model/rules.ts`); needs `ApiVersion`. */
export class VersionedIdempotency extends Context.Tag("acp/VersionedIdempotency")<VersionedIdempotency, boolean>() {}

/**
 * A key on every POST and PUT, and a reused key with another body 409 (UCP's rule), whatever the
 * request's `API-Version`; for groups of a protocol without ACP's versions.
 */
export class RequiredIdempotencyKey
  extends Context.Tag("acp/RequiredIdempotencyKey")<RequiredIdempotencyKey, boolean>()
{}
