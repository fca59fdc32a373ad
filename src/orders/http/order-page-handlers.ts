/** The buyer's page, never cached, framed, indexed or sent as a referrer: its URL is the capability. */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { AppConfig } from "../../platform/config.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { withPageHeaders } from "../../platform/http/page-headers.ts"
import { requireRole } from "../../platform/http/route-guards.ts"
import { isPermalinkToken } from "../model/order-permalink.ts"
import { OrderStore } from "../order-store.ts"
import { OrderPageApi } from "./order-page-api.ts"
import { historyOf, htmlDocument, orderPageJson, renderOrderNotFound, renderOrderPage } from "./order-page.ts"

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const secured = (response: HttpServerResponse.HttpServerResponse) =>
  withPageHeaders(CONTENT_SECURITY_POLICY)(response).pipe(HttpServerResponse.setHeader("vary", "Accept"))

const notFound = (json: boolean) =>
  secured(
    json
      ? HttpServerResponse.unsafeJson({
        type: "invalid_request",
        code: "not_found",
        message: "This order link is not valid."
      }, { status: 404 })
      : HttpServerResponse.html(renderOrderNotFound()).pipe(HttpServerResponse.setStatus(404))
  )

const unavailable = (json: boolean) =>
  secured(
    json
      ? HttpServerResponse.unsafeJson({
        type: "service_unavailable",
        code: "service_unavailable",
        message: "The order cannot be read right now; try again shortly."
      }, { status: 503 })
      : HttpServerResponse.html(
        htmlDocument("Try again shortly", "<h1>Try again shortly</h1><p>The order cannot be read right now.</p>")
      ).pipe(HttpServerResponse.setStatus(503), HttpServerResponse.setHeader("retry-after", "2"))
  )

export const OrderPageHandlers = groupHandlers(
  OrderPageApi,
  "orderPage",
  Effect.fnUntraced(function*(handlers) {
    const store = yield* OrderStore
    // Its currency and links are the file's: fixed.
    const catalog = (yield* Catalog).latest()
    const config = yield* AppConfig
    return handlers.handleRaw(
      "view",
      Effect.fnUntraced(function*({ path }) {
        yield* requireRole(config, "checkout")
        const request = yield* HttpServerRequest.HttpServerRequest
        const json = (request.headers["accept"] ?? "").includes("application/json")
        const answer = Effect.gen(function*() {
          const found = isPermalinkToken(path.token)
            ? yield* store.findOrderByPermalink(path.token)
            : Option.none()
          if (Option.isNone(found)) return notFound(json)
          const { order } = found.value
          const events = yield* store.listEvents({ orderId: order.id, limit: 500 })
          const page = {
            order,
            history: historyOf(
              [...events].reverse().map((event) => ({
                status: event.payload.data.status,
                at: new Date(event.createdAt).toISOString()
              }))
            ),
            currency: events[0]?.payload.currency ?? catalog.currency,
            links: catalog.links
          }
          return secured(
            json
              ? HttpServerResponse.unsafeJson(orderPageJson(page))
              : HttpServerResponse.html(renderOrderPage(page))
          )
        })
        return yield* answer.pipe(
          Effect.catchTag(
            "StorageError",
            (error) => Effect.as(Effect.logError("storage error", error.reason, error.cause), unavailable(json))
          )
        )
      })
    )
  })
)
