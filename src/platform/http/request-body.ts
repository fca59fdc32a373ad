/**
 * A JSON request body by the common rules (CONTRACT §3). Routes read their own (the framework's payload
 * decoding keeps only formatted issues) with the schema their endpoint declares (`declaredPayload`).
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Option, type ParseResult, Schema } from "effect"
import { jsonDepthProblem, TOO_DEEP_MESSAGE } from "../../shared/json-depth.ts"
import { firstFailureAtJsonPath } from "../../shared/schema-failure.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../../shared/storable-text.ts"
import { BadRequest, PayloadTooLarge } from "./errors.ts"
import { type BodyReadFailure, bodyText, MAX_BODY_BYTES, requestBody } from "./request-body-bytes.ts"

const tooLarge = () =>
  new PayloadTooLarge({
    type: "invalid_request",
    code: "request_too_large",
    message: `The request body must be at most ${MAX_BODY_BYTES} bytes.`
  })

const invalidContentType = () =>
  new BadRequest({
    type: "invalid_request",
    code: "invalid_content_type",
    message: "Requests with a body must have Content-Type: application/json."
  })

const invalidJson = (message: string) => new BadRequest({ type: "invalid_request", code: "invalid_json", message })

export const mediaTypeOf = (value: string | undefined): string => (value ?? "").split(";")[0]!.trim().toLowerCase()

const charsetOf = (value: string): string | undefined => {
  for (const parameter of value.split(";").slice(1)) {
    const equals = parameter.indexOf("=")
    if (equals >= 0 && parameter.slice(0, equals).trim().toLowerCase() === "charset") {
      return parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, "$1").toLowerCase()
    }
  }
  return undefined
}

/** JSON exchanged between systems is UTF-8 (RFC 8259 §8.1): the only charset a body may name. */
const UTF8_NAMES: ReadonlySet<string> = new Set(["utf-8", "utf8"])

/** `application/json` or `application/<anything>+json`; a `charset` only if UTF-8, or the text would change. */
export const contentTypeProblem = (value: string | undefined): BadRequest | undefined => {
  const mediaType = mediaTypeOf(value)
  if (mediaType !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) {
    return invalidContentType()
  }
  const charset = charsetOf(value!)
  return charset === undefined || UTF8_NAMES.has(charset)
    ? undefined
    : new BadRequest({
      type: "invalid_request",
      code: "invalid_content_type",
      message: "Request bodies must be JSON in UTF-8: the Content-Type's charset must be utf-8 or absent."
    })
}

const isJsonContentType = (value: string | undefined) => contentTypeProblem(value) === undefined

/** Bodies are read as sent, so a content coding other than `identity` is refused. */
export const contentEncodingProblem = (value: string | undefined): BadRequest | undefined => {
  if (value === undefined) return undefined
  const codings = value.split(",").map((coding) => coding.trim().toLowerCase())
  return codings.every((coding) => coding === "" || coding === "identity")
    ? undefined
    : new BadRequest({
      type: "invalid_request",
      code: "invalid_content_type",
      message: "Request bodies must be sent without content coding: Content-Encoding is not supported.",
      param: "$.headers['Content-Encoding']"
    })
}

export const hasReadableJsonBody = (headers: Readonly<Record<string, string | undefined>>) =>
  isJsonContentType(headers["content-type"]) && contentEncodingProblem(headers["content-encoding"]) === undefined

const bodyReadError = (failure: BodyReadFailure) =>
  failure === "too_large" ? tooLarge() : invalidJson("The request body could not be read.")

const declaresTooMuch = (request: HttpServerRequest.HttpServerRequest) => {
  const declared = Number(request.headers["content-length"] ?? "0")
  return Number.isFinite(declared) && declared > MAX_BODY_BYTES
}

/** The exact bytes, whatever the content type (a signed body is verified as sent), size-checked. */
export const readRawBody: Effect.Effect<Uint8Array, BadRequest | PayloadTooLarge, HttpServerRequest.HttpServerRequest> =
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request): Effect.Effect<Uint8Array, BadRequest | PayloadTooLarge> => {
      const encoded = contentEncodingProblem(request.headers["content-encoding"])
      if (encoded !== undefined) return Effect.fail(encoded)
      return declaresTooMuch(request) ? Effect.fail(tooLarge()) : Effect.mapError(requestBody(request), bodyReadError)
    }
  )

const tooDeepError = (json: unknown): BadRequest | undefined => {
  const param = jsonDepthProblem(json)
  return param === undefined
    ? undefined
    : new BadRequest({ type: "invalid_request", code: "invalid_json", message: TOO_DEEP_MESSAGE, param })
}

/** For a route whose own parser answers malformed JSON (undefined here); too deep is 400 `invalid_json`. */
export const parseJsonWithinDepth = (text: string): Either.Either<unknown, BadRequest> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.right(undefined)
  }
  const tooDeep = tooDeepError(json)
  return tooDeep === undefined ? Either.right(json) : Either.left(tooDeep)
}

/** Empty, malformed or too deep is 400 `invalid_json`; later readers may walk the value recursively. */
export const parseJson = (text: string): Either.Either<unknown, BadRequest> => {
  if (text.trim() === "") return Either.left(invalidJson("The request body is empty; send a JSON object."))
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left(invalidJson("The request body is not valid JSON."))
  }
  const tooDeep = tooDeepError(json)
  return tooDeep === undefined ? Either.right(json) : Either.left(tooDeep)
}

export const readJson: Effect.Effect<unknown, BadRequest | PayloadTooLarge, HttpServerRequest.HttpServerRequest> =
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request): Effect.Effect<unknown, BadRequest | PayloadTooLarge> => {
      const refused = contentTypeProblem(request.headers["content-type"]) ??
        contentEncodingProblem(request.headers["content-encoding"])
      if (refused !== undefined) return Effect.fail(refused)
      if (declaresTooMuch(request)) return Effect.fail(tooLarge())
      return Effect.matchEffect(requestBody(request), {
        onFailure: (failure) => Effect.fail(bodyReadError(failure)),
        onSuccess: (bytes) => parseJson(bodyText(bytes))
      })
    }
  )

/** The request carries a body: a length above 0, or chunked (HTTP/1.1 has no other way to send one). */
export const hasBody = (request: HttpServerRequest.HttpServerRequest) => {
  const length = request.headers["content-length"]
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")
}

export const readOptionalJson: Effect.Effect<
  unknown,
  BadRequest | PayloadTooLarge,
  HttpServerRequest.HttpServerRequest
> = Effect.flatMap(
  HttpServerRequest.HttpServerRequest,
  (request): Effect.Effect<unknown, BadRequest | PayloadTooLarge, HttpServerRequest.HttpServerRequest> => {
    const encoded = contentEncodingProblem(request.headers["content-encoding"])
    if (encoded !== undefined) return Effect.fail(encoded)
    return hasBody(request) ? readJson : Effect.void
  }
)

export const badRequestFromParseError = (error: ParseResult.ParseError): BadRequest => {
  const first = firstFailureAtJsonPath(error)
  return new BadRequest({ type: "invalid_request", code: first.kind, message: first.message, param: first.param })
}

export const unstorableTextError = (json: unknown): BadRequest | undefined => {
  const param = unstorableTextPath(json)
  return param === undefined
    ? undefined
    : new BadRequest({
      type: "invalid_request",
      code: "invalid",
      message: `The body ${UNSTORABLE_TEXT_MESSAGE}.`,
      param
    })
}

/** Storable text first, then strict types, unknown keys ignored, the first error reported. */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknown(schema, { errors: "first", onExcessProperty: "ignore" })
  return (json: unknown): Effect.Effect<A, BadRequest> => {
    const unstorable = unstorableTextError(json)
    return unstorable !== undefined ? Effect.fail(unstorable) : Effect.mapError(decode(json), badRequestFromParseError)
  }
}

export const decodeJsonBody = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = decodeJson(schema)
  return Effect.flatMap(readJson, decode)
}

export type DeclaredPayload<Group extends HttpApiGroup.HttpApiGroup.Any, Name extends string> =
  HttpApiEndpoint.HttpApiEndpoint.Payload<
    HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<Group>, Name>
  >

export const declaredPayload = <
  Group extends HttpApiGroup.HttpApiGroup.Any,
  Name extends HttpApiEndpoint.HttpApiEndpoint.Name<HttpApiGroup.HttpApiGroup.Endpoints<Group>>
>(group: Group, name: Name): Schema.Schema<DeclaredPayload<Group, Name>, unknown, never> => {
  const declared = (group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps).endpoints[name]?.payloadSchema
  if (declared === undefined || Option.isNone(declared)) {
    throw new Error(`Endpoint ${group.identifier}.${name} declares no payload schema`)
  }
  return declared.value as Schema.Schema<DeclaredPayload<Group, Name>, unknown, never>
}

export const decodeDeclaredBody = <
  Group extends HttpApiGroup.HttpApiGroup.Any,
  Name extends HttpApiEndpoint.HttpApiEndpoint.Name<HttpApiGroup.HttpApiGroup.Endpoints<Group>>
>(group: Group, name: Name) => decodeJsonBody(declaredPayload(group, name))
