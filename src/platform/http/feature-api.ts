/** A feature's own `HttpApi`: handler layers are keyed by (API id, group name), so none imports the assembled one. */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { BadRequestWire, InternalErrorWire, PayloadTooLargeWire, ServiceUnavailableWire } from "./errors.ts"

export const API_ID = "agentic-checkout"

/** 400, 413, 500 and 503; 401 only on the groups that authenticate. */
export const withSharedErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  api.addError(BadRequestWire).addError(PayloadTooLargeWire).addError(InternalErrorWire).addError(
    ServiceUnavailableWire
  )

export const featureApi = <Group extends HttpApiGroup.HttpApiGroup.Any>(group: Group) =>
  withSharedErrors(HttpApi.make(API_ID).add(group))
