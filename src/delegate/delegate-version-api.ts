/**
 * The Delegate Payment API of one version as an `HttpApiGroup`, for that version's OpenAPI
 * document (`delegateGroupFor`): the request and response of the version's codec
 * (`delegate-wire/`), the headers (`Idempotency-Key` required from 2026-04-17) and, per status,
 * exactly the `{type, code}` pairs the route answers in that version — its refusals and its
 * idempotency failures (`src/idempotency/idempotency-errors.ts`).
 *
 * Documentation only: the route is served by `DelegateGroup` (`delegate-api.ts`) for every
 * version, and these groups declare a bearer security middleware of their own (whose failure is
 * the version's 401) that has no implementation. The payload a version's group declares is the
 * schema the route decodes that version's requests with (`DELEGATE_WIRE[version].request`).
 */
import {
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import { Schema } from "effect"
import { delegateIdempotencyError } from "../idempotency/idempotency-errors.ts"
import { IDEMPOTENCY_RULES, type IdempotencyFailure } from "../idempotency/idempotency-rules.ts"
import { ApiVersion } from "../platform/http/security.ts"
import { API_VERSION_NAMES, type ApiVersionName } from "../shared/api-versions.ts"
import { JsonPath, optional } from "../shared/schema-helpers.ts"
import { DELEGATE_PAYMENT_PATH, DelegateHeaders, DelegateRoleEnabled } from "./delegate-api.ts"
import {
  DELEGATE_ERROR_STATUS,
  DELEGATE_ERROR_TYPE,
  type DelegateErrorCase
} from "./delegate-wire/delegate-wire-codec.ts"
import { DELEGATE_WIRE } from "./delegate-wire/delegate-wire.ts"

interface ErrorPair {
  readonly status: number
  readonly type: string
  readonly code: string
}

/** Every `{status, type, code}` the route answers in `version` (besides the common 400 API-Version and 404). */
export const delegateErrorPairs = (version: ApiVersionName): ReadonlyArray<ErrorPair> => {
  const codec = DELEGATE_WIRE[version]
  const rules = IDEMPOTENCY_RULES[version]
  const refusals = (Object.keys(DELEGATE_ERROR_STATUS) as Array<DelegateErrorCase>).map((errorCase) => ({
    status: DELEGATE_ERROR_STATUS[errorCase],
    type: DELEGATE_ERROR_TYPE[errorCase],
    code: codec.errors[errorCase].code
  }))
  const failures: ReadonlyArray<IdempotencyFailure> = rules.keyRequired
    ? ["missing_key", "invalid_key", "conflict", "in_flight"]
    : ["invalid_key", "conflict", "in_flight"]
  const idempotency = failures.map((failure) => ({
    status: rules.status[failure],
    ...delegateIdempotencyError(version, failure)
  }))
  return [...refusals, ...idempotency]
}

const distinct = (values: ReadonlyArray<string>) => [...new Set(values)] as [string, ...Array<string>]

/** The error object of one status in one version: its types and codes as enums. */
const errorWire = (status: number, pairs: ReadonlyArray<ErrorPair>) => {
  const here = pairs.filter((pair) => pair.status === status)
  return Schema.Struct({
    type: Schema.Literal(...distinct(here.map((pair) => pair.type))),
    code: Schema.Literal(...distinct(here.map((pair) => pair.code))),
    message: Schema.String,
    param: optional(JsonPath)
  }).annotations(HttpApiSchema.annotations({ status, identifier: `DelegateError${status}` }))
}

const IdempotencyKey = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))

/** The request headers of `version`: from 2026-04-17 the `Idempotency-Key` is required. */
const headersFor = (version: ApiVersionName) =>
  IDEMPOTENCY_RULES[version].keyRequired
    ? Schema.Struct({
      ...DelegateHeaders.fields,
      "idempotency-key": IdempotencyKey.annotations({
        description: "Required: makes the request safe to retry; echoed in the token metadata"
      })
    })
    : DelegateHeaders

const makeGroup = (version: ApiVersionName) => {
  const codec = DELEGATE_WIRE[version]
  const pairs = delegateErrorPairs(version)
  const wire = (status: number) => errorWire(status, pairs)
  class Bearer extends HttpApiMiddleware.Tag<Bearer>()(`acp/DelegateBearer/${version}`, {
    failure: wire(401),
    security: { bearer: HttpApiSecurity.bearer }
  }) {}
  return HttpApiGroup.make("delegate")
    .add(
      HttpApiEndpoint.post("tokenize", DELEGATE_PAYMENT_PATH)
        .setHeaders(headersFor(version))
        .setPayload(codec.request)
        .addSuccess(codec.response, { status: 201 })
        .addError(wire(400))
        .addError(wire(409))
        .addError(wire(413))
        .addError(wire(422))
        .addError(wire(429))
        .addError(wire(500))
        .addError(wire(503))
        .annotate(OpenApi.Summary, "Tokenize a card into a vt_ token limited by an allowance")
    )
    .middleware(ApiVersion)
    .middleware(Bearer)
    .middleware(DelegateRoleEnabled)
    .annotate(OpenApi.Description, `Delegate Payment API (payment provider vault), API-Version ${version}`)
}

const groups = Object.fromEntries(API_VERSION_NAMES.map((version) => [version, makeGroup(version)])) as Record<
  ApiVersionName,
  ReturnType<typeof makeGroup>
>

/** The Delegate Payment API group of `version`, for its OpenAPI document (not served). */
export const delegateGroupFor = (version: ApiVersionName) => groups[version]
