/**
 * What the OpenAPI document states beyond the endpoint schemas: the response headers middleware sets, and
 * per API version the required request headers and the error types (applied in `src/app/api.ts`).
 */
import { IDEMPOTENCY_KEY_PATTERN } from "./idempotency-key.ts"
import { carriesRetryAfter } from "./retry-after.ts"

type Header = { readonly description: string; readonly schema: { readonly type: "string" | "integer" } }

const REQUEST_ID: Header = {
  description: "The request's Request-Id header, or one generated for it; also in the access log.",
  schema: { type: "string" }
}
const IDEMPOTENCY_KEY_ECHO: Header = {
  description: "The request's Idempotency-Key, echoed when it was sent and valid.",
  schema: { type: "string" }
}
const IDEMPOTENT_REPLAYED: Header = {
  description: "`true` when this is the stored response of an earlier request with the same " +
    "Idempotency-Key and body, sent again without running the request.",
  schema: { type: "string" }
}
const RETRY_AFTER: Header = {
  description: "Seconds to wait before retrying: the request budget (429), the storage (503), or a " +
    "request with the same Idempotency-Key still in progress (409 idempotency_in_flight).",
  schema: { type: "integer" }
}

const isHeaderParameter = (name: string) => (parameter: { readonly in?: unknown; readonly name?: unknown }) =>
  parameter.in === "header" && typeof parameter.name === "string" && parameter.name.toLowerCase() === name

/** The methods idempotency covers: POST, and PUT (the Cart API's update). */
const keyedMethod = (method: string) => method === "post" || method === "put"

/** `isReplayableStatus`: whether the idempotency middleware stores (and replays) an answer of a status. */
export const documentResponseHeaders =
  (options: { readonly isReplayableStatus: (status: number) => boolean }) =>
  (spec: Record<string, any>): Record<string, any> => {
    for (const operations of Object.values<Record<string, any>>(spec.paths ?? {})) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const parameters: ReadonlyArray<any> = operation?.parameters ?? []
        const takesIdempotencyKey = parameters.some(isHeaderParameter("idempotency-key"))
        for (const [status, response] of Object.entries<any>(operation?.responses ?? {})) {
          const headers: Record<string, Header> = { "Request-Id": REQUEST_ID }
          if (takesIdempotencyKey) {
            headers["Idempotency-Key"] = IDEMPOTENCY_KEY_ECHO
            if (keyedMethod(method) && options.isReplayableStatus(Number(status))) {
              headers["Idempotent-Replayed"] = IDEMPOTENT_REPLAYED
            }
          }
          if (carriesRetryAfter(Number(status), takesIdempotencyKey && keyedMethod(method))) {
            headers["Retry-After"] = RETRY_AFTER
          }
          response.headers = { ...response.headers, ...headers }
        }
      }
    }
    return spec
  }

const IDEMPOTENCY_KEY_REQUIRED =
  "Required: a POST (or PUT) without it is refused with 400 `idempotency_key_required`. Makes the request safe to " +
  "retry: the same key and body get the stored response again."

/** Apply before `documentResponseHeaders`, which reads which operations take the key. */
export const documentRequestHeaders =
  (options: { readonly apiVersion: string; readonly idempotencyKeyRequiredIn: ReadonlyArray<string> }) =>
  (spec: Record<string, any>): Record<string, any> => {
    for (const operations of Object.values<Record<string, any>>(spec.paths ?? {})) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const parameters: Array<any> = operation?.parameters ?? []
        const version = parameters.find(isHeaderParameter("api-version"))
        if (version !== undefined) version.schema = { ...version.schema, enum: [options.apiVersion] }
        const tags: ReadonlyArray<string> = operation?.tags ?? []
        if (!keyedMethod(method) || !tags.some((tag) => options.idempotencyKeyRequiredIn.includes(tag))) continue
        const key = parameters.find(isHeaderParameter("idempotency-key"))
        const required = {
          name: key?.name ?? "idempotency-key",
          in: "header",
          required: true,
          description: IDEMPOTENCY_KEY_REQUIRED,
          schema: { type: "string", pattern: IDEMPOTENCY_KEY_PATTERN.source, maxLength: 255 }
        }
        operation.parameters = key === undefined
          ? [...parameters, required]
          : parameters.map((parameter) => parameter === key ? { ...key, ...required } : parameter)
      }
    }
    return spec
  }

/** Removes the error types a version lacks from the error schemas' `type` enums. */
export const withoutErrorTypes =
  (withdrawn: ReadonlyArray<string>) => (spec: Record<string, any>): Record<string, any> => {
    if (withdrawn.length === 0) return spec
    for (const schema of Object.values<any>(spec.components?.schemas ?? {})) {
      const type = schema?.properties?.type
      if (Array.isArray(type?.enum) && type.enum.includes("invalid_request")) {
        type.enum = type.enum.filter((value: unknown) => !withdrawn.includes(String(value)))
      }
    }
    return spec
  }
