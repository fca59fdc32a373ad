/** `GET /order-status/{token}`, the order's `permalink_url`: no API key, the token is the capability. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { featureApi } from "../../platform/http/feature-api.ts"
import { ORDER_STATUS_PATH } from "../model/order-permalink.ts"

const Html = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" }))

export class OrderPageGroup extends HttpApiGroup.make("orderPage")
  .add(
    HttpApiEndpoint.get("view", `${ORDER_STATUS_PATH}/:token`)
      .setPath(Schema.Struct({ token: Schema.String }))
      .addSuccess(Html)
      .annotate(
        OpenApi.Summary,
        "The buyer's order page (the order's permalink_url): status and history, items, totals, shipments, " +
          "refunds; JSON with Accept: application/json; 404 page for an unknown link"
      )
  )
  .annotate(OpenApi.Description, "Pages for the buyer, opened by capability URLs (no API key)")
{}

export const OrderPageApi = featureApi(OrderPageGroup)
