/** Health (`/healthz`), readiness (`/readyz`: storage answers too) and discovery (`discovery.ts`). */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Schema } from "effect"
import { Catalog } from "../catalog/catalog-service.ts"
import { CheckoutStore } from "../checkout/checkout-store.ts"
import { offeredCatalog } from "../payments/model/offered-catalog.ts"
import { PaymentProvider } from "../payments/payment-provider.ts"
import { AppConfig } from "../platform/config.ts"
import { serviceUnavailable } from "../platform/http/errors.ts"
import { groupHandlers } from "../platform/http/group-context.ts"
import { requireRole } from "../platform/http/route-guards.ts"
import { Api } from "./api.ts"
import { discoveryDocument, DiscoveryResponse, SELLER_ROLES } from "./discovery.ts"

/** The RFC asks for at least an hour: the document changes only with the configuration or catalog. */
const DISCOVERY_CACHE_CONTROL = "public, max-age=3600"

export const SystemHandlers = groupHandlers(
  Api,
  "system",
  Effect.fnUntraced(function*(handlers) {
    const store = yield* CheckoutStore
    const config = yield* AppConfig
    // Built once (what it shows of the catalog is the file's, fixed), through the schema so that only the official fields reach the wire.
    const catalog = offeredCatalog((yield* Catalog).latest(), yield* PaymentProvider)
    const document = Schema.encodeSync(DiscoveryResponse)(discoveryDocument(config, catalog))
    const discovery = HttpServerResponse.unsafeJson(document, { headers: { "cache-control": DISCOVERY_CACHE_CONTROL } })
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        store.ping.pipe(
          Effect.as({ status: "ready" as const, storage: "ok" as const }),
          Effect.mapError(() => serviceUnavailable())
        ))
      .handleRaw("wellKnown", () => Effect.as(requireRole(config, ...SELLER_ROLES), discovery))
  })
)
