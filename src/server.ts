/**
 * The service assembled from its layers: configuration, database, storage, catalog, payment,
 * the HTTP application, and background work. `main.ts` runs it; tests build parts of it.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option, Schedule } from "effect"
import { createServer } from "node:http"
import { join } from "node:path"
import { HttpAppLive, HttpAppService } from "./http/app.ts"
import { CatalogLive } from "./services/catalog.ts"
import { CheckoutService, CheckoutServiceLive } from "./services/checkout-service.ts"
import { AppConfig } from "./services/config.ts"
import { Ids } from "./services/ids.ts"
import { ApprovingPaymentProvider } from "./services/payment-provider.ts"
import { makeDatabaseLayer } from "./storage/database.ts"
import { SqlCheckoutStore } from "./storage/sql-checkout-store.ts"

/** PostgreSQL at DATABASE_URL, else the embedded store under DATA_DIR. */
export const DatabaseFromConfig = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    makeDatabaseLayer(
      Option.match(config.databaseUrl, {
        onSome: (url) => ({ kind: "postgres" as const, url, poolSize: config.databasePoolSize }),
        onNone: () => ({ kind: "embedded" as const, dataDir: join(config.dataDir, "pglite") })
      })
    ))
)

/** Expires idle sessions and releases their stock every few seconds (safe with several processes). */
export const ExpirySweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const checkout = yield* CheckoutService
    yield* checkout.expireDue(500).pipe(
      Effect.tap((count) => (count > 0 ? Effect.logInfo(`expired ${count} idle sessions`) : Effect.void)),
      Effect.catchAll((error) => Effect.logWarning("session expiry sweep failed", error.reason)),
      Effect.repeat(Schedule.spaced("5 seconds")),
      Effect.forkScoped
    )
  })
)

/** The HTTP application and the checkout service; needs storage, catalog, payments and config. */
export const ApplicationServices = HttpAppLive.pipe(
  Layer.provideMerge(CheckoutServiceLive),
  Layer.provide(Ids.Live)
)

/** The application with the configured catalog, the payment provider and background work. */
export const ApplicationLive = Layer.merge(ApplicationServices, ExpirySweeper.pipe(Layer.provide(ApplicationServices))).pipe(
  Layer.provide([CatalogLive, ApprovingPaymentProvider])
)

/** The HTTP server on PORT/HOST serving the application. */
export const HttpServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const app = yield* HttpAppService
    return HttpServer.serve(app).pipe(
      HttpServer.withLogAddress,
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
    )
  })
)

export const ServerLive = HttpServerLive.pipe(
  Layer.provide(ApplicationLive),
  Layer.provide(SqlCheckoutStore),
  Layer.provide(DatabaseFromConfig)
)
