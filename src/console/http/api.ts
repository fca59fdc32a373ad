/**
 * The console's routes: HTML pages and the forms they post, for a console session (cookie) instead of an
 * API key and API-Version; the handlers read requests themselves. Left out of the OpenAPI documents.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { featureApi } from "../../platform/http/feature-api.ts"
import { CONSOLE_PATH } from "./cookies.ts"

const Page = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" }))
const OrderPath = Schema.Struct({ order_id: Schema.String })
const ProductPath = Schema.Struct({ product_id: Schema.String })

const page = <const Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.get(name, `${CONSOLE_PATH}${path}`).addSuccess(Page)
const form = <const Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.post(name, `${CONSOLE_PATH}${path}`).addSuccess(Page)

export class ConsoleGroup extends HttpApiGroup.make("console")
  .add(HttpApiEndpoint.get("home", CONSOLE_PATH).addSuccess(Page))
  .add(page("signInPage", "/sign-in"))
  .add(form("signIn", "/sign-in"))
  .add(form("signOut", "/sign-out"))
  .add(page("orders", "/orders"))
  .add(page("order", "/orders/:order_id").setPath(OrderPath))
  .add(
    form("orderAction", "/orders/:order_id/:action").setPath(
      Schema.Struct({ order_id: Schema.String, action: Schema.String })
    )
  )
  .add(page("deliveries", "/deliveries"))
  .add(form("redrive", "/deliveries/:event_id/redrive").setPath(Schema.Struct({ event_id: Schema.String })))
  .add(page("received", "/received"))
  .add(page("receivedOrder", "/received/:order_id").setPath(OrderPath))
  .add(page("stock", "/stock"))
  .add(page("sessions", "/sessions"))
  .add(page("carts", "/carts"))
  .add(page("products", "/products"))
  .add(page("product", "/products/:product_id").setPath(ProductPath))
  .add(form("productTitle", "/products/:product_id/title").setPath(ProductPath))
  .add(form("productArchive", "/products/:product_id/archive").setPath(ProductPath))
  .add(
    form("productVariant", "/products/:product_id/variants/:variant_id").setPath(
      Schema.Struct({ product_id: Schema.String, variant_id: Schema.String })
    )
  )
  .add(page("feed", "/feed"))
  .add(form("feedPush", "/feed/push"))
  .add(form("feedRetry", "/feed/retry"))
  .annotate(OpenApi.Exclude, true)
{}

export const ConsoleApi = featureApi(ConsoleGroup)
