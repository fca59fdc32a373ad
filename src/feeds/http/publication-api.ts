/**
 * The merchant's view of the publication to the agent's Feed API (merchant keys only): its state with
 * the products waiting and dead-lettered, a push of every product now, a retry of the dead letters, and
 * the catalog in the Feed API's file form (`metadata.json` + `products.jsonl`, `npm run feed:export`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiHeaders } from "../../platform/http/api-headers.ts"
import { NotFoundWire, ServiceUnavailableWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { ApiVersion, MerchantAuthorization } from "../../platform/http/security.ts"
import { optional, Timestamp } from "../../shared/schema-helpers.ts"
import { Product } from "../wire/acp/v2026-04-17.ts"

export const ProductPushState = Schema.Struct({
  product_id: Schema.String,
  attempts: Schema.Int,
  last_error: optional(Schema.String),
  next_attempt_at: optional(Timestamp),
  dead_at: optional(Timestamp),
  pushed_at: optional(Timestamp)
}).annotations({ identifier: "ProductPushState" })

export const FeedPublicationView = Schema.Struct({
  api_url: Schema.String,
  /** The feed's id at the Feed API; null until it is created. */
  feed_id: Schema.NullOr(Schema.String),
  products: Schema.Int,
  /** In their current form at the Feed API. */
  published: Schema.Int,
  /** Changed since their last push, or never pushed, or waiting for a retry. */
  pending: Schema.Array(ProductPushState),
  /** Not pushed again until retried. */
  dead: Schema.Array(ProductPushState)
}).annotations({ identifier: "FeedPublication" })

export const FeedPushReport = Schema.Struct({
  feed_id: Schema.String,
  sent: Schema.Int,
  unchanged: Schema.Int,
  deferred: Schema.Int,
  failed: Schema.Int
}).annotations({ identifier: "FeedPushReport" })

export const FeedFileForm = Schema.Struct({
  /** `metadata.json`: the feed's `FeedMetadata` (its id once published). */
  metadata: Schema.Struct({ id: Schema.String, target_country: optional(Schema.String), updated_at: Timestamp }),
  /** `products.jsonl`, one per line. */
  products: Schema.Array(Product),
  /** Products left out: they fail the feed schema. */
  invalid: Schema.Array(Schema.Struct({ product_id: Schema.String, reason: Schema.String }))
}).annotations({ identifier: "FeedFileForm" })

export class FeedPublicationGroup extends HttpApiGroup.make("feedPublication")
  .add(
    HttpApiEndpoint.get("status", "/feed-publication")
      .setHeaders(ApiHeaders)
      .addSuccess(FeedPublicationView)
      .annotate(
        OpenApi.Description,
        "The publication to FEED_API_URL (in development, this process's own Feed API): 404 if none"
      )
  )
  .add(
    HttpApiEndpoint.post("push", "/feed-publication/push")
      .setHeaders(ApiHeaders)
      .addSuccess(FeedPushReport)
      .annotate(
        OpenApi.Description,
        "Pushes every product now (the feed created first if needed); 503 when the Feed API cannot make the feed"
      )
  )
  .add(
    HttpApiEndpoint.post("retry", "/feed-publication/retry")
      .setHeaders(ApiHeaders)
      .addSuccess(Schema.Struct({ retried: Schema.Int }))
      .annotate(OpenApi.Description, "The dead-lettered products due again at the next push")
  )
  .add(
    HttpApiEndpoint.get("export", "/feed-publication/products")
      .setHeaders(ApiHeaders)
      .addSuccess(FeedFileForm)
      .annotate(OpenApi.Description, "The catalog in the Feed API's file form (with or without FEED_API_URL)")
  )
  .addError(NotFoundWire)
  .addError(ServiceUnavailableWire)
  .middleware(ApiVersion)
  .middleware(MerchantAuthorization)
  .annotate(OpenApi.Description, "Feed publication (merchant): the catalog published to the agent's Feed API")
{}

export const FeedPublicationApi = featureApi(FeedPublicationGroup)
