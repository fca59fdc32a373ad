/** Checks a handler runs first: whether its role is switched on, and how a storage failure answers. */
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig, type Role } from "../config.ts"
import { type InternalError, internalError, type ServiceUnavailable, serviceUnavailable } from "./errors.ts"

/** Dies with the router's own "no route" failure (rendered as 404 by the request middleware) unless a role is on. */
export const requireRole = (
  ...roles: ReadonlyArray<Role>
): Effect.Effect<void, never, AppConfig | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (roles.some((role) => config.roles.has(role))) return
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* Effect.die(new HttpServerError.RouteNotFound({ request }))
  })

export const storageFailure = (error: StorageError): Effect.Effect<never, ServiceUnavailable | InternalError> =>
  Effect.zipRight(
    Effect.logError("storage error", error.reason, error.cause),
    Effect.fail(error.reason === "unavailable" ? serviceUnavailable() : internalError())
  )
