/** The service assembled from its layers; `main.ts` runs it, tests build parts of it. */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Path from "@effect/platform/Path"
import { Context, Data, Effect, Layer, Option, Runtime, Scope } from "effect"
import { readFileSync } from "node:fs"
import { createServer, type Server as HttpNodeServer } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { join } from "node:path"
import { CartService, CartServiceLive } from "../carts/cart-service.ts"
import { SqlCartStore } from "../carts/store/sql-cart-store.ts"
import { CatalogLive } from "../catalog/catalog-service.ts"
import { SqlProductStore } from "../catalog/store/sql-product-store.ts"
import { CheckoutService, CheckoutServiceLive } from "../checkout/checkout-service.ts"
import { CheckoutOrderLinkCopies } from "../checkout/order-link-copies.ts"
import { SqlCheckoutStore } from "../checkout/store/sql-checkout-store.ts"
import { SqlConsoleSessionStore } from "../console/store/sql-console-session-store.ts"
import { makeDatabaseLayer } from "../db/database.ts"
import { IssuerAuthenticationLive } from "../delegate-authentication/authentication-service.ts"
import { SqlAuthenticationStore } from "../delegate-authentication/store/sql-authentication-store.ts"
import { SqlVaultStore } from "../delegate-payment/store/sql-vault-store.ts"
import { VaultLive } from "../delegate-payment/vault.ts"
import { FeedServiceLive } from "../feeds/feed-service.ts"
import { FeedPublisherLive, feedPublisherWorker } from "../feeds/http/feed-publisher.ts"
import { SqlFeedPublicationStore } from "../feeds/store/sql-feed-publication-store.ts"
import { SqlFeedStore } from "../feeds/store/sql-feed-store.ts"
import { SqlIdempotencyStore } from "../idempotency/store/sql-idempotency-store.ts"
import { IdempotencySweeper } from "../idempotency/sweeper.ts"
import { NodeWebhookTransport } from "../orders/http/node-webhook-transport.ts"
import { WebhookSenderLive, webhookSenderWorker } from "../orders/http/webhook-sender.ts"
import { OrderServicesLive } from "../orders/order-service.ts"
import { OutboxSignalLive } from "../orders/outbox-signal.ts"
import { SqlOrderStore } from "../orders/store/sql-order-store.ts"
import { BuiltInPaymentProcessor } from "../payments/builtin-payment-processor.ts"
import { SqlChargeStore } from "../payments/store/sql-charge-store.ts"
import { forkBatchSweep } from "../platform/batch-sweep.ts"
import { AppConfig, type AppConfigShape } from "../platform/config.ts"
import { answerClientError } from "../platform/http/client-error.ts"
import { Ids } from "../platform/ids.ts"
import { SqlRateLimiter } from "../rate-limit/store/sql-rate-limiter.ts"
import { SdkStripeClient } from "../stripe/http/sdk-stripe-client.ts"
import { StripeOrderPayments } from "../stripe/order-refunds.ts"
import { PaymentRouter } from "../stripe/payment-router.ts"
import { SqlStripeEventsStore } from "../stripe/store/sql-stripe-events-store.ts"
import { SqlStripePaymentStore } from "../stripe/store/sql-stripe-payment-store.ts"
import type { StripeClient } from "../stripe/stripe-client.ts"
import { StripePaymentProvider } from "../stripe/stripe-payment-provider.ts"
import { StripeWebhooksLive } from "../stripe/stripe-webhooks.ts"
import { ProfileFetcherLive } from "../ucp/http/profile-fetcher.ts"
import { UcpSigningKeysLive } from "../ucp/signing-keys.ts"
import { SqlReceivedEventsStore } from "../webhook-receiver/store/sql-received-events-store.ts"
import { HttpAppLive, HttpAppService } from "./http-app.ts"

/** PostgreSQL at DATABASE_URL, else the embedded store under DATA_DIR. */
export const DatabaseFromConfig = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    makeDatabaseLayer(
      Option.match(config.databaseUrl, {
        onSome: (url) => ({
          kind: "postgres" as const,
          url,
          poolSize: config.databasePoolSize,
          preparedStatements: config.databasePreparedStatements
        }),
        onNone: () => ({ kind: "embedded" as const, dataDir: join(config.dataDir, "pglite") })
      })
    ))
)

export const EXPIRY_BATCH = 50

/** Expires idle sessions and settles payments left pending, in small batches: a batch locks its products' stock. */
export const ExpirySweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const checkout = yield* CheckoutService
    yield* forkBatchSweep({
      batch: checkout.expireDue(EXPIRY_BATCH),
      batchSize: EXPIRY_BATCH,
      every: "5 seconds",
      logSwept: (count) => `expired ${count} idle sessions or settled their pending payments`,
      logFailure: { message: "session expiry sweep failed", detail: (error) => error.reason }
    })
  })
)

/** Deletes expired carts (absent to every read already: this only reclaims their rows). */
export const CartSweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const carts = yield* CartService
    yield* forkBatchSweep({
      batch: carts.expireDue(CART_SWEEP_BATCH),
      batchSize: CART_SWEEP_BATCH,
      every: "1 minute",
      logSwept: (count) => `deleted ${count} expired carts`,
      logFailure: { message: "cart expiry sweep failed", detail: (error) => error.reason }
    })
  })
)

export const CART_SWEEP_BATCH = 500

export const ApplicationServices = HttpAppLive.pipe(
  Layer.provide(StripeWebhooksLive),
  Layer.provide(FeedServiceLive),
  // The merchant's products published to the agent's Feed API: FEED_API_URL, or this process's own in development.
  Layer.provideMerge(FeedPublisherLive.pipe(Layer.provide(NodeHttpClient.layer))),
  Layer.provideMerge(CartServiceLive),
  Layer.provideMerge(CheckoutServiceLive),
  Layer.provideMerge(VaultLive),
  Layer.provideMerge(IssuerAuthenticationLive),
  Layer.provideMerge(
    OrderServicesLive.pipe(Layer.provide(CheckoutOrderLinkCopies), Layer.provide(StripeOrderPayments))
  ),
  Layer.provideMerge(OutboxSignalLive),
  // UCP: the platforms' profiles (fetched, validated, cached) and this business's signing keys.
  Layer.provideMerge(Layer.mergeAll(ProfileFetcherLive, UcpSigningKeysLive)),
  // One Stripe client for what the application does at Stripe (refunds, reading what its webhooks name).
  Layer.provideMerge(SdkStripeClient),
  Layer.provide(Ids.Live)
)

export const WebhookSenderWorkerLive = webhookSenderWorker().pipe(
  Layer.provide(WebhookSenderLive),
  Layer.provide(NodeWebhookTransport)
)

/**
 * Payments by the handler the agent chose: through Stripe for a `stripe` handler (with a key), else the
 * built-in test processor (`docs/payments.md`, "Test cards"), which needs no account.
 */
export const paymentsOver = <E, R>(stripe: Layer.Layer<StripeClient, E, R>) =>
  PaymentRouter.pipe(
    Layer.provide(BuiltInPaymentProcessor.pipe(Layer.provide(VaultLive), Layer.provide(Ids.Live))),
    Layer.provide(StripePaymentProvider.pipe(Layer.provide(stripe)))
  )

export const PaymentsLive = paymentsOver(SdkStripeClient)

export const ApplicationLive = Layer.mergeAll(
  ApplicationServices,
  ExpirySweeper.pipe(Layer.provide(ApplicationServices)),
  CartSweeper.pipe(Layer.provide(ApplicationServices)),
  IdempotencySweeper,
  // Woken by the order events this process's services queue (the one `OutboxSignal` they share).
  WebhookSenderWorkerLive.pipe(Layer.provide(ApplicationServices))
).pipe(
  Layer.provide(PaymentsLive),
  Layer.provide(CatalogLive)
)

export const HttpServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const app = yield* HttpAppService
    const server = yield* makeNodeServer(config)
    return serveWithPlatformServicesOnly(app).pipe(
      // No trace exporter is configured: the platform's per-request span would be built and dropped.
      HttpMiddleware.withTracerDisabledWhen(() => true),
      HttpServer.withLogAddress,
      Layer.provide(
        shutdownGrace(server).pipe(
          Layer.provideMerge(NodeHttpServer.layer(() => server, { port: config.port, host: config.host }))
        )
      )
    )
  })
)

/**
 * All that requests run with: handlers and middleware took their services when built, and each service
 * a request adds copies its context, so a smaller one makes every request cheaper
 * (`docs/decisions.md#performance-decisions`).
 */
export type PlatformServices =
  | Scope.Scope
  | HttpPlatform.HttpPlatform
  | Etag.Generator
  | FileSystem.FileSystem
  | Path.Path

/** The part of a context that requests run with (`test/support/http.ts` runs every HTTP test with it). */
export const platformServicesOnly: (context: Context.Context<PlatformServices>) => Context.Context<PlatformServices> =
  Context.pick(Scope.Scope, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path)

const serveWithPlatformServicesOnly = (app: HttpAppService["Type"]) =>
  Layer.scopedDiscard(
    Effect.flatMap(
      HttpServer.HttpServer,
      (server) => Effect.mapInputContext(server.serve(app), platformServicesOnly)
    )
  )

export class TlsConfigError extends Data.TaggedError("TlsConfigError")<{ readonly message: string }> {}

/** Plain HTTP, or HTTPS (TLS 1.3 minimum) with TLS_CERT_FILE/TLS_KEY_FILE, read once at start. */
export const makeNodeServer = (
  config: Pick<AppConfigShape, "tls" | "httpKeepAliveTimeoutSeconds">
): Effect.Effect<HttpNodeServer, TlsConfigError> =>
  Option.match(config.tls, {
    onNone: () => Effect.sync(() => createServer()),
    onSome: Effect.fnUntraced(function*({ certFile, keyFile }) {
      const read = (file: string, variable: string) =>
        Effect.try({
          try: () => readFileSync(file),
          catch: (e) =>
            new TlsConfigError({
              message: `${variable}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)})`
            })
        })
      const cert = yield* read(certFile, "TLS_CERT_FILE")
      const key = yield* read(keyFile, "TLS_KEY_FILE")
      return yield* Effect.try({
        // An https.Server emits the same "request"/"upgrade" events the platform listens to.
        try: () => createHttpsServer({ cert, key, minVersion: "TLSv1.3" }) as unknown as HttpNodeServer,
        catch: (e) =>
          new TlsConfigError({
            message: `TLS_CERT_FILE/TLS_KEY_FILE: not a usable certificate and key (${
              e instanceof Error ? e.message : String(e)
            })`
          })
      })
    })
  }).pipe(
    Effect.map(withKeepAlive(config.httpKeepAliveTimeoutSeconds)),
    Effect.flatMap(answeringClientErrors)
  )

/** Requests Node's parser refuses get our error object (`client-error.ts`) and an access log line. */
const answeringClientErrors = (server: HttpNodeServer) =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const log = Runtime.runSync(runtime)
    return server.on("clientError", answerClientError((line) => log(Effect.logInfo(line))))
  })

/** Idle connections close after `seconds`; headers get 5 s more (the usual rule for servers behind a proxy). */
const withKeepAlive = (seconds: number) => (server: HttpNodeServer): HttpNodeServer => {
  server.keepAliveTimeout = seconds * 1000
  server.headersTimeout = (seconds + 5) * 1000
  return server
}

/** How long shutdown waits for in-flight requests before closing their connections. */
export const SHUTDOWN_GRACE_MILLIS = 10_000

/**
 * Graceful shutdown: the server stops accepting and waits for open connections, closing each as it
 * becomes idle and the rest after `SHUTDOWN_GRACE_MILLIS`; the application closes after the server.
 */
const shutdownGrace = (server: HttpNodeServer) =>
  Layer.scopedDiscard(
    // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
    Effect.gen(function*() {
      yield* HttpServer.HttpServer // built after the server, so this finalizer runs before its close
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          const idle = setInterval(() => server.closeIdleConnections(), 50)
          idle.unref()
          setTimeout(() => {
            clearInterval(idle)
            server.closeAllConnections()
          }, SHUTDOWN_GRACE_MILLIS).unref()
          server.once("close", () => clearInterval(idle))
        })
      )
    })
  )

/**
 * The feed publisher starts once the server listens: its first push may go to this process's own Feed API
 * (the development default), which must answer it.
 */
const ServedWithFeedPublisher = feedPublisherWorker.pipe(Layer.provide(HttpServerLive))

export const ServerLive = ServedWithFeedPublisher.pipe(
  Layer.provide(ApplicationLive),
  Layer.provide([
    SqlCheckoutStore,
    SqlVaultStore,
    SqlAuthenticationStore,
    SqlIdempotencyStore,
    SqlOrderStore,
    SqlReceivedEventsStore,
    SqlChargeStore,
    SqlStripePaymentStore,
    SqlConsoleSessionStore,
    SqlRateLimiter,
    SqlStripeEventsStore,
    SqlProductStore,
    SqlFeedStore,
    SqlFeedPublicationStore,
    SqlCartStore
  ]),
  Layer.provide(DatabaseFromConfig)
)
