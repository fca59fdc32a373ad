/**
 * A client of an agent-hosted Feed API (ACP 2026-04-17) over `@effect/platform`'s `HttpClient`: create
 * and read a feed, upsert and read its products. Each call has a deadline covering the whole exchange;
 * products are checked against the 2026-04-17 schema before anything is sent. Answers are decoded
 * leniently (keys a later version adds, such as `feed_update_id`, are dropped); failures are
 * `FeedApiError`s saying whether a retry may help. The client retries nothing itself.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Duration, Effect, Either, Option, Redacted, Schema } from "effect"
import { validateCreateFeed, validateUpsertRequest } from "../wire/acp/feed-validation.ts"
import {
  type CreateFeedRequest,
  FEED_API_VERSION,
  FeedErrorBody,
  FeedMetadata,
  type Product,
  ProductsResponse,
  UpsertProductsResponse
} from "../wire/acp/v2026-04-17.ts"
import {
  type FeedApiError,
  FeedApiInvalidResponse,
  FeedApiRejected,
  FeedApiUnavailable,
  FeedPayloadInvalid,
  isRetriableStatus
} from "./feed-api-errors.ts"

export interface FeedApiClientOptions {
  /** The Feed API's base URL, `http(s)://host[:port][/prefix]`; routes are under `<base>/feeds`. */
  readonly baseUrl: string
  /** The bearer key the agent platform issued. */
  readonly apiKey: Redacted.Redacted<string>
  /** Deadline of one call, connection to last byte; default 10 s. */
  readonly timeout?: Duration.DurationInput
}

export interface FeedApiClient {
  readonly createFeed: (
    request: CreateFeedRequest,
    options?: { readonly idempotencyKey?: string }
  ) => Effect.Effect<FeedMetadata, FeedApiError>
  readonly getFeed: (id: string) => Effect.Effect<FeedMetadata, FeedApiError>
  readonly getProducts: (id: string) => Effect.Effect<ReadonlyArray<Product>, FeedApiError>
  readonly upsertProducts: (
    id: string,
    products: ReadonlyArray<unknown>
  ) => Effect.Effect<UpsertProductsResponse, FeedApiError>
}

export const DEFAULT_FEED_API_TIMEOUT = Duration.seconds(10)

/** Answers may be large (a whole product set), but not unbounded. */
const MAX_ANSWER_CHARACTERS = 64 * 1024 * 1024

const leniently = { onExcessProperty: "ignore", errors: "first" } as const
const decodeError = Schema.decodeUnknownOption(FeedErrorBody, leniently)

const retryAfterOf = (response: HttpClientResponse.HttpClientResponse): number | undefined => {
  const value = response.headers["retry-after"]
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A failure's answer as a `FeedApiError`: retriable by status, 409 only while the same key is in flight. */
const failureOf = (response: HttpClientResponse.HttpClientResponse, text: string): FeedApiError => {
  const body = Option.getOrUndefined(decodeError(parsed(text)))
  const status = response.status
  const message = body?.message ?? `The Feed API answered ${status}.`
  if (isRetriableStatus(status) || (status === 409 && body?.code === "idempotency_in_flight")) {
    return new FeedApiUnavailable({
      reason: "status",
      status,
      code: body?.code,
      retryAfterSeconds: retryAfterOf(response),
      message
    })
  }
  return new FeedApiRejected({ status, code: body?.code, param: body?.param, message })
}

export const makeFeedApiClient = (options: FeedApiClientOptions) =>
  Effect.map(HttpClient.HttpClient, (http): FeedApiClient => {
    const base = `${options.baseUrl.replace(/\/+$/, "")}/feeds`
    const timeout = options.timeout ?? DEFAULT_FEED_API_TIMEOUT
    const feedUrl = (id: string) => `${base}/${encodeURIComponent(id)}`

    /** One request and its whole answer, read as text. */
    const exchange = Effect.fnUntraced(function*(request: HttpClientRequest.HttpClientRequest) {
      const response = yield* http.execute(
        request.pipe(
          HttpClientRequest.bearerToken(Redacted.value(options.apiKey)),
          HttpClientRequest.setHeader("api-version", FEED_API_VERSION),
          HttpClientRequest.acceptJson
        )
      )
      return { response, text: yield* response.text }
    })

    const send = <A, I>(
      request: HttpClientRequest.HttpClientRequest,
      success: Schema.Schema<A, I>,
      name: string,
      expected: number
    ): Effect.Effect<A, FeedApiError> =>
      exchange(request).pipe(
        Effect.flatMap(({ response, text }): Effect.Effect<A, FeedApiError> => {
          if (text.length > MAX_ANSWER_CHARACTERS) {
            return Effect.fail(
              new FeedApiInvalidResponse({ status: response.status, message: "The answer is too large." })
            )
          }
          if (response.status !== expected) return Effect.fail(failureOf(response, text))
          return Schema.decodeUnknown(success, leniently)(parsed(text)).pipe(
            Effect.mapError(() =>
              new FeedApiInvalidResponse({
                status: response.status,
                message: `The ${response.status} answer is not a Feed API ${name}.`
              })
            )
          )
        }),
        Effect.catchTags({
          RequestError: (error) =>
            Effect.fail(
              new FeedApiUnavailable({
                reason: "transport",
                status: undefined,
                code: undefined,
                retryAfterSeconds: undefined,
                message: `The Feed API could not be reached (${error.reason}).`
              })
            ),
          ResponseError: (error) =>
            Effect.fail(
              new FeedApiUnavailable({
                reason: "transport",
                status: error.response.status,
                code: undefined,
                retryAfterSeconds: undefined,
                message: `The Feed API's answer could not be read (${error.reason}).`
              })
            )
        }),
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new FeedApiUnavailable({
              reason: "timeout",
              status: undefined,
              code: undefined,
              retryAfterSeconds: undefined,
              message: `The Feed API did not answer within ${Duration.format(timeout)}.`
            })
        })
      )

    return {
      createFeed: (request, createOptions) => {
        const checked = validateCreateFeed(request)
        if (Either.isLeft(checked)) {
          return Effect.fail(new FeedPayloadInvalid({ param: checked.left.param, message: checked.left.message }))
        }
        const key = createOptions?.idempotencyKey
        return send(
          HttpClientRequest.post(base).pipe(
            HttpClientRequest.bodyUnsafeJson(checked.right),
            key === undefined ? (r) => r : HttpClientRequest.setHeader("idempotency-key", key)
          ),
          FeedMetadata,
          "FeedMetadata",
          201
        )
      },
      getFeed: (id) => send(HttpClientRequest.get(feedUrl(id)), FeedMetadata, "FeedMetadata", 200),
      getProducts: (id) =>
        Effect.map(
          send(HttpClientRequest.get(`${feedUrl(id)}/products`), ProductsResponse, "ProductsResponse", 200),
          (answer) => answer.products
        ),
      upsertProducts: (id, products) => {
        const checked = validateUpsertRequest({ products })
        if (Either.isLeft(checked)) {
          return Effect.fail(new FeedPayloadInvalid({ param: checked.left.param, message: checked.left.message }))
        }
        return send(
          HttpClientRequest.patch(`${feedUrl(id)}/products`).pipe(
            HttpClientRequest.bodyUnsafeJson({ products: checked.right })
          ),
          UpsertProductsResponse,
          "UpsertProductsResponse",
          200
        )
      }
    }
  })
