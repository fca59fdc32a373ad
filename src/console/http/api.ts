/**
 * The merchant console's routes (`/console/…`): server-rendered pages and the forms they post.
 * No API key and no API-Version: a signed-in console session (cookie) stands for the API key it
 * was opened with, and every form carries its CSRF token (`cookies.ts`). Every answer is
 * an HTML page, so the handlers read requests themselves; the routes are left out of the OpenAPI
 * documents, which describe the API.
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
  .annotate(OpenApi.Exclude, true)
{}

export const ConsoleApi = featureApi(ConsoleGroup)
