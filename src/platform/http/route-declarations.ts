/**
 * What a route group declares about itself beyond its endpoints, as `HttpApiGroup` annotations
 * (`group.annotate(Idempotent, true)`). Read once at start from the assembled API
 * (`route-table.ts`), so a new group gets idempotency and its error object by declaration only.
 */
import { Context } from "effect"

/**
 * The error object a group's routes answer in: the checkout error object (CONTRACT §3; also the
 * order and receiver routes), the delegate payment one or the delegate authentication one (each
 * with its closed set of codes). Groups that declare none answer in the checkout one.
 */
export type ErrorFamilyName = "checkout" | "delegate" | "delegate_authentication"

export class ErrorFamily extends Context.Tag("acp/ErrorFamily")<ErrorFamily, ErrorFamilyName>() {}

/**
 * The group's POSTs are idempotent (CONTRACT §6): an `Idempotency-Key` is claimed, and the
 * answer stored and replayed, scoped to the caller's API key (so the group must authenticate).
 */
export class Idempotent extends Context.Tag("acp/Idempotent")<Idempotent, boolean>() {}

/**
 * The group is an API of the Agentic Commerce Protocol whose idempotency rules are those of the
 * request's `API-Version` (`src/idempotency/model/rules.ts`): required key, 422 conflicts and
 * error objects per version, and a key used under another version is a conflict. Groups that do
 * not declare it (the service's own APIs: orders, webhook deliveries, received orders) keep the
 * interface document's rules whatever `API-Version` says. A group declaring it must declare
 * `ApiVersion` (checked at start).
 */
export class VersionedIdempotency extends Context.Tag("acp/VersionedIdempotency")<VersionedIdempotency, boolean>() {}
