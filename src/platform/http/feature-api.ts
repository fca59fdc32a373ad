/**
 * Every feature declares its route groups in an `HttpApi` of its own with the service's id and the
 * errors every route shares: its handlers are built against it (`HttpApiBuilder.group`), and
 * `src/app/api.ts` assembles the groups into the one `Api` the server serves. A handler layer is
 * keyed by (API id, group name), so the two meet without a feature importing the assembled API.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { BadRequestWire, InternalErrorWire, PayloadTooLargeWire, ServiceUnavailableWire } from "./errors.ts"

export const API_ID = "agentic-checkout"

/**
 * The errors any route may answer: 400 (a header, path or body the route refuses), 413, 500, 503.
 * 401 is declared by the groups that authenticate, so the open system routes do not list it.
 */
export const withSharedErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  api.addError(BadRequestWire).addError(PayloadTooLargeWire).addError(InternalErrorWire).addError(
    ServiceUnavailableWire
  )

/** The API of one group, for building its handlers. */
export const featureApi = <Group extends HttpApiGroup.HttpApiGroup.Any>(group: Group) =>
  withSharedErrors(HttpApi.make(API_ID).add(group))
