/**
 * The service assembled from its layers: configuration, database, storage, catalog, payment,
 * the HTTP application, and background work. `main.ts` runs it; tests build parts of it.
 */
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
import { CatalogLive } from "../catalog/catalog-service.ts"
import { CheckoutService, CheckoutServiceLive } from "../checkout/checkout-service.ts"
import { CheckoutOrderLinkCopies } from "../checkout/order-link-copies.ts"
import { SqlCheckoutStore } from "../checkout/store/sql-checkout-store.ts"
import { SqlConsoleSessionStore } from "../console/store/sql-console-session-store.ts"
import { makeDatabaseLayer } from "../db/database.ts"
import { IssuerAuthenticationLive } from "../delegate-authentication/authentication-service.ts"
import { SqlAuthenticationStore } from "../delegate-authentication/store/sql-authentication-store.ts"
import { SqlVaultStore } from "../delegate-payment/store/sql-vault-store.ts"
import { VaultLive } from "../delegate-payment/vault.ts"
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

/** Sessions expired per sweep transaction. */
export const EXPIRY_BATCH = 50

/**
 * Expires idle sessions and releases their stock, and settles payments their requests left
 * pending (`expireDue`; safe with several processes). A sweep expires batches of `EXPIRY_BATCH`
 * sessions, one transaction each, until a batch is not full, then waits 5 seconds: small batches,
 * because a batch holds the stock rows of its sessions' products locked until it commits and
 * creates of those products wait for it.
 */
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

/**
 * The HTTP application and the checkout service; needs storage (the rate limiter included),
 * catalog, payments and config.
 */
export const ApplicationServices = HttpAppLive.pipe(
  Layer.provideMerge(CheckoutServiceLive),
  Layer.provideMerge(VaultLive),
  Layer.provideMerge(IssuerAuthenticationLive),
  Layer.provideMerge(OrderServicesLive.pipe(Layer.provide(CheckoutOrderLinkCopies))),
  Layer.provideMerge(OutboxSignalLive),
  Layer.provide(Ids.Live)
)

/**
 * The order-event sender (role `webhook_sender`): a background fiber delivering the outbox to
 * WEBHOOK_URL over Node's HTTP client (safe with several processes). Needs `OrderStore`, `AppConfig`.
 */
export const WebhookSenderWorkerLive = webhookSenderWorker().pipe(
  Layer.provide(WebhookSenderLive),
  Layer.provide(NodeWebhookTransport)
)

/** The built-in test processor (`docs/payments.md`, "Test cards"); needs `ChargeStore`, `VaultStore`, `AppConfig`. */
export const PaymentsLive = BuiltInPaymentProcessor.pipe(Layer.provide(VaultLive), Layer.provide(Ids.Live))

/** The application with the configured catalog, the payment provider and background work. */
export const ApplicationLive = Layer.mergeAll(
  ApplicationServices,
  ExpirySweeper.pipe(Layer.provide(ApplicationServices)),
  IdempotencySweeper,
  // Woken by the order events this process's services queue (the one `OutboxSignal` they share).
  WebhookSenderWorkerLive.pipe(Layer.provide(ApplicationServices))
).pipe(
  Layer.provide([CatalogLive, PaymentsLive])
)

/**
 * The HTTP server on PORT/HOST serving the application: HTTPS (TLS 1.3 minimum) when TLS files
 * are configured; graceful shutdown on SIGTERM/SIGINT (see `shutdownGrace`).
 */
export const HttpServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const app = yield* HttpAppService
    const server = yield* makeNodeServer(config)
    return serveWithPlatformServicesOnly(app).pipe(
      // No trace exporter is configured: the platform's per-request span (the URL parsed, every
      // header copied into span attributes) would be built and dropped on every request.
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
 * `HttpServer.serve(app)`, with requests run in a context of the platform's services only.
 *
 * The platform runs every request with the context it was started in, which here is every
 * service of the application; handlers and middleware took theirs when they were built and
 * need only the request and the platform's file, path and ETag services (the HTTP tests run every
 * route with no more: `platformServicesOnly` in `test/support/http.ts`). Each service a request
 * adds (the request, its route, the caller, a span per SQL statement) copies that context, so a
 * smaller one makes every request cheaper (`docs/decisions.md#performance-decisions`). The server
 * itself keeps the scope it closes with.
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

/** The TLS certificate or key file cannot be read or used. */
export class TlsConfigError extends Data.TaggedError("TlsConfigError")<{ readonly message: string }> {}

/**
 * A plain HTTP server, or HTTPS with TLS 1.3 minimum when TLS_CERT_FILE/TLS_KEY_FILE are set
 * (the files are read once, at start; a bad file stops the start with a message naming it),
 * keeping idle connections open for `httpKeepAliveTimeoutSeconds` (`withKeepAlive`).
 */
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

/**
 * Requests Node's parser refuses get our error object (`client-error.ts`), not a bare status line,
 * and an access log line of their own, through this fiber's loggers as every other line.
 */
const answeringClientErrors = (server: HttpNodeServer) =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const log = Runtime.runSync(runtime)
    return server.on("clientError", answerClientError((line) => log(Effect.logInfo(line))))
  })

/**
 * Idle keep-alive connections close after `seconds` (Node announces it in each answer's
 * `Keep-Alive: timeout=` header), and a request's headers must arrive within 5 s more (that bound
 * above the idle time is the usual rule for servers behind a proxy). The request timeout stays
 * Node's 300 s.
 */
const withKeepAlive = (seconds: number) => (server: HttpNodeServer): HttpNodeServer => {
  server.keepAliveTimeout = seconds * 1000
  server.headersTimeout = (seconds + 5) * 1000
  return server
}

/** How long shutdown waits for in-flight requests before closing their connections. */
export const SHUTDOWN_GRACE_MILLIS = 10_000

/**
 * Graceful shutdown, in the order the scope closes: the platform stops dispatching requests and
 * `server.close()` stops accepting and waits for open connections; meanwhile idle keep-alive
 * connections are closed as soon as they become idle (so a finished in-flight request lets the
 * process go at once), and whatever still runs after `SHUTDOWN_GRACE_MILLIS` is cut. The
 * application and the database pool close only after the server has closed.
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

export const ServerLive = HttpServerLive.pipe(
  Layer.provide(ApplicationLive),
  Layer.provide([
    SqlCheckoutStore,
    SqlVaultStore,
    SqlAuthenticationStore,
    SqlIdempotencyStore,
    SqlOrderStore,
    SqlReceivedEventsStore,
    SqlChargeStore,
    SqlConsoleSessionStore,
    SqlRateLimiter
  ]),
  Layer.provide(DatabaseFromConfig)
)
