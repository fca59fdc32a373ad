/** Checks a handler runs first: whether its role is switched on, and how a storage failure answers. */
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import type { AppConfigShape, Role } from "../config.ts"
import { type InternalError, internalError, type ServiceUnavailable, serviceUnavailable } from "./errors.ts"

/**
 * Dies with the router's own "no route" failure (rendered as 404 by the request middleware) unless
 * one of `roles` is on in `config`. Decided from the configuration the handlers are built with:
 * a request reads no service of the application (`group-context.ts`).
 */
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
