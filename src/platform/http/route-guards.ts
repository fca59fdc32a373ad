import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import type { AppConfigShape, Role } from "../config.ts"
import { type InternalError, internalError, type ServiceUnavailable, serviceUnavailable } from "./errors.ts"

/** Dies with the router's "no route" (a 404) unless one of `roles` is on; decided when handlers are built. */
export const requireRole = (
  config: AppConfigShape,
  ...roles: ReadonlyArray<Role>
): Effect.Effect<void, never, HttpServerRequest.HttpServerRequest> =>
  roles.some((role) => config.roles.has(role))
    ? Effect.void
    : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.die(new HttpServerError.RouteNotFound({ request })))

export const storageFailure = (error: StorageError): Effect.Effect<never, ServiceUnavailable | InternalError> =>
  Effect.zipRight(
    Effect.logError("storage error", error.reason, error.cause),
    Effect.fail(error.reason === "unavailable" ? serviceUnavailable() : internalError())
  )
