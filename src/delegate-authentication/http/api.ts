/**
 * The Delegate Authentication API (ACP 2026-04-17) and the simulated ACS's pages. Its errors' `code` is a closed enum;
 * which member each refusal takes: `docs/three-d-secure.md`, "Errors, idempotency, limits".
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { BadRequestWire, NotFoundWire, wire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { ErrorFamily, Idempotent } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion } from "../../platform/http/security.ts"
import { JsonPath, optional } from "../../shared/schema-helpers.ts"
import {
  AuthenticateRequest,
  AuthenticationSessionWire,
  AuthenticationSessionWithResultWire,
  CreateAuthenticationRequest
} from "../wire/acp/v2026-04-17.ts"

const common = { message: Schema.String, param: optional(JsonPath) }
const Code = Schema.Literal("invalid_card", "duplicate_request", "idempotency_conflict")

/** 400: refused input (first problem, `param` its JSONPath). */
export class AuthnBadRequest extends Schema.TaggedError<AuthnBadRequest>()("AuthnBadRequest", {
  type: Schema.Literal("invalid_request"),
  code: Code,
  ...common
}) {}
export class AuthnUnauthorized extends Schema.TaggedError<AuthnUnauthorized>()("AuthnUnauthorized", {
  type: Schema.Literal("invalid_request"),
  code: Code,
  ...common
}) {}
/** 403: a merchant key (the API takes an agent key). */
export class AuthnForbidden extends Schema.TaggedError<AuthnForbidden>()("AuthnForbidden", {
  type: Schema.Literal("invalid_request"),
  code: Code,
  ...common
}) {}
/** 404: no such authentication session for this API key. */
export class AuthnNotFound extends Schema.TaggedError<AuthnNotFound>()("AuthnNotFound", {
  type: Schema.Literal("invalid_request"),
  code: Code,
  ...common
}) {}
/** 409: a step the session's state does not allow; idempotency conflicts. */
export class AuthnConflict extends Schema.TaggedError<AuthnConflict>()("AuthnConflict", {
  type: Schema.Literal("invalid_request"),
  code: Code,
  ...common
}) {}
/** 429, with `Retry-After`. */
export class AuthnRateLimited extends Schema.TaggedError<AuthnRateLimited>()("AuthnRateLimited", {
  type: Schema.Literal("rate_limit_exceeded"),
  code: Code,
  ...common
}) {}
/** 500: unexpected (logged, never detailed). */
export class AuthnInternalError extends Schema.TaggedError<AuthnInternalError>()("AuthnInternalError", {
  type: Schema.Literal("processing_error"),
  code: Code,
  ...common
}) {}
/** 503: storage unreachable, with `Retry-After`. */
export class AuthnServiceUnavailable extends Schema.TaggedError<AuthnServiceUnavailable>()(
  "AuthnServiceUnavailable",
  { type: Schema.Literal("service_unavailable"), code: Code, ...common }
) {}

export const AuthnBadRequestWire = wire(AuthnBadRequest, 400)
export const AuthnUnauthorizedWire = wire(AuthnUnauthorized, 401)
export const AuthnForbiddenWire = wire(AuthnForbidden, 403)
export const AuthnNotFoundWire = wire(AuthnNotFound, 404)
export const AuthnConflictWire = wire(AuthnConflict, 409)
export const AuthnRateLimitedWire = wire(AuthnRateLimited, 429)
export const AuthnInternalErrorWire = wire(AuthnInternalError, 500)
export const AuthnServiceUnavailableWire = wire(AuthnServiceUnavailable, 503)

export const DELEGATE_AUTHENTICATION_PATH = "/delegate_authentication"
export const DELEGATE_AUTHENTICATION_VERSION = "2026-04-17"

/** 404 like an unknown route unless the `delegate_authentication` role is on (`ROLES`). */
export class AuthnRoleEnabled extends HttpApiMiddleware.Tag<AuthnRoleEnabled>()("acp/AuthnRoleEnabled", {
  failure: NotFoundWire
}) {}

/** Refuses any body but a URL-encoded form (multipart above all) before the framework reads it. */
export class AcsFormBody extends HttpApiMiddleware.Tag<AcsFormBody>()("acp/AcsFormBody", {
  failure: BadRequestWire
}) {}

/** Bearer authentication answered in this API's error object (`AgentAuthorization` then reads the same result). */
export class AuthnBearer extends HttpApiMiddleware.Tag<AuthnBearer>()("acp/AuthnBearer", {
  failure: Schema.Union(AuthnUnauthorizedWire, AuthnForbiddenWire)
}) {}

const Headers = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "2026-04-17" }),
  "idempotency-key": optional(Schema.String.annotations({ description: "Makes a POST safe to retry" })),
  "request-id": optional(Schema.String)
})
const SessionPath = Schema.Struct({ authentication_session_id: Schema.String.pipe(Schema.maxLength(255)) })

export class DelegateAuthenticationGroup extends HttpApiGroup.make("delegateAuthentication")
  .add(
    HttpApiEndpoint.post("create", DELEGATE_AUTHENTICATION_PATH)
      .setHeaders(Headers)
      .setPayload(CreateAuthenticationRequest)
      .addSuccess(AuthenticationSessionWire, { status: 201 })
      .addError(AuthnBadRequestWire)
      .addError(AuthnConflictWire)
      .addError(AuthnRateLimitedWire)
      .addError(AuthnInternalErrorWire)
      .addError(AuthnServiceUnavailableWire)
      .annotate(OpenApi.Summary, "Create an issuer authentication (3-D Secure) session for a card and amount")
  )
  .add(
    HttpApiEndpoint.post("authenticate", `${DELEGATE_AUTHENTICATION_PATH}/:authentication_session_id/authenticate`)
      .setPath(SessionPath)
      .setHeaders(Headers)
      .setPayload(AuthenticateRequest)
      .addSuccess(AuthenticationSessionWire)
      .addError(AuthnBadRequestWire)
      .addError(AuthnNotFoundWire)
      .addError(AuthnConflictWire)
      .addError(AuthnRateLimitedWire)
      .addError(AuthnInternalErrorWire)
      .addError(AuthnServiceUnavailableWire)
      .annotate(OpenApi.Summary, "Authenticate after the device fingerprint: frictionless result or a challenge")
  )
  .add(
    HttpApiEndpoint.get("get", `${DELEGATE_AUTHENTICATION_PATH}/:authentication_session_id`)
      .setPath(SessionPath)
      .setHeaders(Headers)
      .addSuccess(AuthenticationSessionWithResultWire)
      .addError(AuthnBadRequestWire)
      .addError(AuthnNotFoundWire)
      .addError(AuthnConflictWire)
      .addError(AuthnRateLimitedWire)
      .addError(AuthnInternalErrorWire)
      .addError(AuthnServiceUnavailableWire)
      .annotate(OpenApi.Summary, "The session's status and, once finished, its authentication result")
  )
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .middleware(AuthnBearer)
  .middleware(AuthnRoleEnabled)
  .annotate(Idempotent, true)
  .annotate(ErrorFamily, "delegate_authentication")
  .annotate(OpenApi.Description, "Delegate Authentication API (issuer authentication provider, ACP 2026-04-17)")
{}

const Html = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" }))

export class AcsGroup extends HttpApiGroup.make("acs")
  .add(
    HttpApiEndpoint.post("method", `${DELEGATE_AUTHENTICATION_PATH}/:authentication_session_id/acs/method`)
      .setPath(SessionPath)
      .setPayload(
        Schema.Struct({ threeDSMethodData: Schema.String.pipe(Schema.maxLength(8192)) }).pipe(
          HttpApiSchema.withEncoding({ kind: "UrlParams" })
        )
      )
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "Test ACS: the 3DS Method (device fingerprint) page")
  )
  .add(
    HttpApiEndpoint.post("challenge", `${DELEGATE_AUTHENTICATION_PATH}/:authentication_session_id/acs/challenge`)
      .setPath(SessionPath)
      .setPayload(
        Schema.Struct({
          creq: Schema.String.pipe(Schema.maxLength(8192)),
          code: optional(Schema.String.pipe(Schema.maxLength(64))),
          abandon: optional(Schema.String.pipe(Schema.maxLength(16)))
        }).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))
      )
      .addSuccess(Html)
      .annotate(
        OpenApi.Summary,
        "Test ACS: the challenge; without `code` its page, with `code` its answer (123456 authenticates)"
      )
  )
  .middleware(AuthnRoleEnabled)
  .middleware(AcsFormBody)
  .annotate(OpenApi.Description, "Simulated access control server of the built-in authentication provider")
{}

export const DelegateAuthenticationApi = featureApi(DelegateAuthenticationGroup)
export const AcsApi = featureApi(AcsGroup)
