/**
 * The Feed API of ACP 2026-04-17, hosted for the agent platform (role `webhook_receiver`, agent keys):
 * merchants create feeds and upsert products. Every error is the feed's flat `Error` object; the
 * codes of its own are `feed_not_found`, `invalid_target_country` and `invalid_product_payload`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { TooManyRequestsWire, wire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { Idempotent } from "../../platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion } from "../../platform/http/security.ts"
import { optional } from "../../shared/schema-helpers.ts"
import { StorableString } from "../../shared/storable-text.ts"
import {
  CreateFeedRequest,
  FeedMetadata,
  ProductsResponse,
  UpsertProductsRequest,
  UpsertProductsResponse
} from "../wire/acp/v2026-04-17.ts"

const common = { type: Schema.Literal("invalid_request"), message: Schema.String, param: optional(Schema.String) }

/** 400 of this API: its own codes, and those of the rules every route shares (`docs/feeds.md`). */
export class FeedBadRequest extends Schema.TaggedError<FeedBadRequest>()("FeedBadRequest", {
  ...common,
  code: Schema.Literal(
    "invalid_target_country",
    "invalid_product_payload",
    "too_many_products",
    "invalid",
    "missing_api_version",
    "unsupported_api_version"
  )
}) {}

export class FeedNotFoundError extends Schema.TaggedError<FeedNotFoundError>()("FeedNotFound", {
  ...common,
  code: Schema.Literal("feed_not_found")
}) {}

export const FeedBadRequestWire = wire(FeedBadRequest, 400)
export const FeedNotFoundWire = wire(FeedNotFoundError, 404)

/** Only 2026-04-17 defines this API: any other `API-Version` is refused in the feed's error object. */
export class FeedApiVersion extends HttpApiMiddleware.Tag<FeedApiVersion>()("acp/FeedApiVersion", {
  failure: FeedBadRequestWire
}) {}

export const FEEDS_PATH = "/feeds"

const Headers = Schema.Struct({
  "api-version": Schema.String.annotations({ description: "2026-04-17" }),
  "request-id": optional(Schema.String.annotations({ description: "Echoed back; generated when absent" }))
})

const FeedPath = Schema.Struct({
  id: StorableString.annotations({ description: "Identifier of the feed resource", examples: ["feed_8f3K2x"] })
})

export class FeedsGroup extends HttpApiGroup.make("feeds")
  .add(
    HttpApiEndpoint.post("createFeed", FEEDS_PATH)
      .setHeaders(Headers.pipe(Schema.extend(Schema.Struct({
        "idempotency-key": optional(Schema.String.annotations({ description: "Makes the creation safe to retry" }))
      }))))
      .setPayload(CreateFeedRequest)
      .addSuccess(FeedMetadata, { status: 201 })
      .addError(FeedBadRequestWire)
      .addError(TooManyRequestsWire)
      .annotate(OpenApi.Summary, "Create a feed")
  )
  .add(
    HttpApiEndpoint.get("getFeed", `${FEEDS_PATH}/:id`)
      .setPath(FeedPath)
      .setHeaders(Headers)
      .addSuccess(FeedMetadata)
      .addError(FeedBadRequestWire)
      .addError(FeedNotFoundWire)
      .addError(TooManyRequestsWire)
      .annotate(OpenApi.Summary, "Retrieve feed metadata")
  )
  .add(
    HttpApiEndpoint.get("getFeedProducts", `${FEEDS_PATH}/:id/products`)
      .setPath(FeedPath)
      .setHeaders(Headers)
      .addSuccess(ProductsResponse)
      .addError(FeedBadRequestWire)
      .addError(FeedNotFoundWire)
      .addError(TooManyRequestsWire)
      .annotate(OpenApi.Summary, "Retrieve the full current product set of a feed")
  )
  .add(
    HttpApiEndpoint.patch("upsertFeedProducts", `${FEEDS_PATH}/:id/products`)
      .setPath(FeedPath)
      .setHeaders(Headers)
      .setPayload(UpsertProductsRequest)
      .addSuccess(UpsertProductsResponse)
      .addError(FeedBadRequestWire)
      .addError(FeedNotFoundWire)
      .addError(TooManyRequestsWire)
      .annotate(
        OpenApi.Summary,
        "Upsert products by Product.id; products omitted from the request remain unchanged"
      )
  )
  // Run last to first: the key, then this API's version rule (so `ApiVersion`, kept for what reads
  // the declarations, never refuses a request here).
  .middleware(ApiVersion)
  .middleware(FeedApiVersion)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
  .annotate(OpenApi.Description, "Feed API (agent platform, ACP 2026-04-17): product feeds pushed by merchants")
{}

export const FeedsApi = featureApi(FeedsGroup)
