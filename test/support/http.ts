/**
 * The HTTP application in-process: requests go straight to the `HttpApp` (no port), on the
 * calling test's runtime, so `TestClock` drives time. Storage is in memory unless a layer says
 * otherwise.
 */
import { HttpApp, HttpServer } from "@effect/platform"
import { type Context, Effect, Either, Layer, Runtime, Schema } from "effect"
import { HttpAppService } from "../../src/app/http-app.ts"
import { ApplicationServices, PaymentsLive, type PlatformServices, platformServicesOnly } from "../../src/app/server.ts"
import type { CartStore } from "../../src/carts/cart-store.ts"
import { type Catalog } from "../../src/catalog/catalog-service.ts"
import type { ProductStore } from "../../src/catalog/product-store.ts"
import type { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { checkoutCodecs } from "../../src/checkout/wire/acp/versions.ts"
import type { ConsoleSessionStore } from "../../src/console/console-session-store.ts"
import type { AuthenticationStore } from "../../src/delegate-authentication/authentication-store.ts"
import type { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import type { FeedPublicationStore } from "../../src/feeds/feed-publication-store.ts"
import type { FeedStore } from "../../src/feeds/feed-store.ts"
import type { IdempotencyStore } from "../../src/idempotency/idempotency-store.ts"
import type { OrderStore } from "../../src/orders/order-store.ts"
import type { ChargeStore } from "../../src/payments/charge-store.ts"
import type { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { AppConfig, type AppConfigShape } from "../../src/platform/config.ts"
import type { FaultInjection } from "../../src/platform/fault-injection.ts"
import type { RateLimiter } from "../../src/rate-limit/rate-limiter.ts"
import type { StripeEventsStore } from "../../src/stripe/stripe-events-store.ts"
import type { StripePaymentStore } from "../../src/stripe/stripe-payment-store.ts"
import type { ReceivedEventsStore } from "../../src/webhook-receiver/received-events-store.ts"
import { InProcessRateLimiter } from "../doubles/in-process-rate-limiter.ts"
import { MemoryAuthenticationStore } from "../doubles/memory-authentication-store.ts"
import { MemoryCartStore } from "../doubles/memory-cart-store.ts"
import { MemoryChargeStore } from "../doubles/memory-charge-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import { MemoryConsoleSessionStore } from "../doubles/memory-console-session-store.ts"
import { freshMemoryDatabase, type MemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryFeedPublicationStore } from "../doubles/memory-feed-publication-store.ts"
import { MemoryFeedStore } from "../doubles/memory-feed-store.ts"
import { MemoryIdempotencyStore } from "../doubles/memory-idempotency-store.ts"
import { MemoryOrderStore } from "../doubles/memory-order-store.ts"
import { MemoryProductStore } from "../doubles/memory-product-store.ts"
import { MemoryReceivedEventsStore } from "../doubles/memory-received-events-store.ts"
import { MemoryStripeEventsStore } from "../doubles/memory-stripe-events-store.ts"
import { MemoryStripePaymentStore } from "../doubles/memory-stripe-payment-store.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { DemoCatalog } from "./demo-catalog.ts"
import { isMerchantPath, testConfig } from "./test-config.ts"
import { checkUcpResponse } from "./ucp-schemas.ts"

/** The agent key of `testConfig` (`API_KEYS`). */
export const API_KEY = "sk_test_key"
/** The merchant key of `testConfig` (`MERCHANT_API_KEYS`): the order and delivery routes and the console take it. */
export const MERCHANT_API_KEY = "mk_test_key"

/** The key a request sends unless told otherwise: the one of the kind its route takes. */
export const keyFor = (path: string): string => isMerchantPath(path) ? MERCHANT_API_KEY : API_KEY
export const API_VERSION = "2025-09-29"

/**
 * The stores default to memory ones, all on one memory database made fresh per `testApp` (a memory
 * store given here is put on it too, unless it has its own).
 */
/** What the built-in processor needs from the application's layers. */
type PaymentsNeed = Layer.Layer.Context<typeof PaymentsLive>

export interface TestAppOptions {
  readonly config?: Partial<AppConfigShape>
  /** The checkout store; in memory by default. */
  readonly store?: Layer.Layer<CheckoutStore, unknown, MemoryDatabase>
  /** The delegate payment vault's store; in memory by default. */
  readonly vaultStore?: Layer.Layer<VaultStore, unknown, MemoryDatabase>
  readonly payments?: Layer.Layer<PaymentProvider> | Layer.Layer<PaymentProvider, unknown, PaymentsNeed>
  /** The issuer authentication sessions' store; in memory by default. */
  readonly authenticationStore?: Layer.Layer<AuthenticationStore, unknown, MemoryDatabase>
  /** The idempotency keys' store; in memory by default. */
  readonly idempotencyStore?: Layer.Layer<IdempotencyStore, unknown, MemoryDatabase>
  /** Full orders and the order-event outbox; in memory by default. */
  readonly orderStore?: Layer.Layer<OrderStore, unknown, MemoryDatabase>
  /** The built-in processor's charges; in memory by default. */
  readonly chargeStore?: Layer.Layer<ChargeStore, unknown, MemoryDatabase>
  /** The Stripe payments by attempt key; in memory by default. */
  readonly stripeStore?: Layer.Layer<StripePaymentStore, unknown, MemoryDatabase>
  /** The webhook receiver's events; in memory by default. */
  readonly receivedEventsStore?: Layer.Layer<ReceivedEventsStore, unknown, MemoryDatabase>
  /** The Stripe events acted on; in memory by default. */
  readonly stripeEventsStore?: Layer.Layer<StripeEventsStore, unknown, MemoryDatabase>
  /** The merchant console's sign-in sessions; in memory by default. */
  readonly consoleSessionStore?: Layer.Layer<ConsoleSessionStore, unknown, MemoryDatabase>
  /** Products and their variants; in memory by default. */
  readonly productStore?: Layer.Layer<ProductStore, unknown, MemoryDatabase>
  /** The hosted Feed API's feeds and products; in memory by default. */
  readonly feedStore?: Layer.Layer<FeedStore, unknown, MemoryDatabase>
  /** What was published to an agent's Feed API; in memory by default. */
  readonly feedPublicationStore?: Layer.Layer<FeedPublicationStore, unknown, MemoryDatabase>
  /** The carts; in memory by default. */
  readonly cartStore?: Layer.Layer<CartStore, unknown, MemoryDatabase>
  /** The catalog; the demo catalog by default. */
  readonly catalog?: Layer.Layer<Catalog>
  /** The rate limiter; in process by default (fresh per `testApp`). */
  readonly rateLimiter?: Layer.Layer<RateLimiter, unknown>
  /** Where requests crash (`test/support/faults.ts`); nowhere by default, as in production. */
  readonly faults?: Layer.Layer<FaultInjection>
}

/** The application with in-memory storage, the demo catalog and the built-in test processor. */
export const testApp = (options: TestAppOptions = {}) =>
  ApplicationServices.pipe(
    Layer.provide(options.payments ?? PaymentsLive),
    Layer.provide(options.catalog ?? DemoCatalog),
    Layer.provideMerge(options.chargeStore ?? MemoryChargeStore),
    Layer.provideMerge(options.stripeStore ?? MemoryStripePaymentStore),
    Layer.provideMerge(options.store ?? MemoryCheckoutStore),
    Layer.provideMerge(options.vaultStore ?? MemoryVaultStore),
    Layer.provideMerge(options.authenticationStore ?? MemoryAuthenticationStore),
    Layer.provide(options.idempotencyStore ?? MemoryIdempotencyStore),
    Layer.provide(options.rateLimiter ?? InProcessRateLimiter),
    Layer.provide(options.faults ?? Layer.empty),
    Layer.provideMerge(options.orderStore ?? MemoryOrderStore),
    Layer.provideMerge(options.receivedEventsStore ?? MemoryReceivedEventsStore),
    Layer.provideMerge(options.consoleSessionStore ?? MemoryConsoleSessionStore),
    Layer.provideMerge(options.stripeEventsStore ?? MemoryStripeEventsStore),
    Layer.provideMerge(options.productStore ?? MemoryProductStore),
    Layer.provideMerge(
      Layer.mergeAll(
        options.feedStore ?? MemoryFeedStore,
        options.feedPublicationStore ?? MemoryFeedPublicationStore,
        options.cartStore ?? MemoryCartStore
      )
    ),
    Layer.provideMerge(Layer.succeed(AppConfig, testConfig(options.config))),
    Layer.provideMerge(HttpServer.layerContext),
    Layer.provide(freshMemoryDatabase),
    Layer.orDie
  )

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string

  readonly body: any
}

export interface RequestOptions {
  /** A value is sent as JSON; a string is sent as is. */
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** `false` omits Authorization; a string replaces the key (by default the one of the route's kind, `keyFor`). */
  readonly auth?: string | false
  /** `false` omits API-Version; a string replaces it. */
  readonly version?: string | false
  readonly contentType?: string | false
}

/**
 * The application as a web handler, on the test's clock and services. Requests run with the
 * platform's services only, as the server runs them (`src/app/server.ts`): a route or middleware that
 * needed a service from the application's context would fail here.
 */
export const appHandler = Effect.gen(function*() {
  const app = yield* HttpAppService
  const runtime = Runtime.updateContext(
    yield* Effect.runtime<never>(),
    (context) => platformServicesOnly(context as Context.Context<PlatformServices>) as Context.Context<never>
  )
  return HttpApp.toWebHandlerRuntime(runtime)(app as HttpApp.Default<never, never>)
})

/** Sends one request to the application and reads the whole response. */
export const request = (method: string, path: string, options: RequestOptions = {}) =>
  Effect.gen(function*() {
    const handler = yield* appHandler
    const headers = new Headers(options.headers ?? {})
    if (options.auth !== false) headers.set("authorization", `Bearer ${options.auth ?? keyFor(path)}`)
    if (options.version !== false) headers.set("api-version", options.version ?? API_VERSION)
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
      if (options.contentType !== false) headers.set("content-type", options.contentType ?? "application/json")
      // As an HTTP/1.1 client does (a body has a length or is chunked): routes may read it only then.
      if (!headers.has("content-length") && !headers.has("transfer-encoding")) {
        headers.set("content-length", String(Buffer.byteLength(body, "utf8")))
      }
    }
    // Interrupting the request aborts it, as a client that goes away does: the app's fiber is interrupted.
    const response = yield* Effect.promise((signal) =>
      handler(
        new Request(`http://acp.test${path}`, { method, headers, signal, ...(body !== undefined ? { body } : {}) })
      )
    )
    const text = yield* Effect.promise(() => response.text())
    let parsed: any = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    checkSessionResponse(method, path, response.status, parsed, headers.get("api-version"))
    return { status: response.status, headers: response.headers, text, body: parsed } satisfies TestResponse
  })

const strictly = { onExcessProperty: "error" } as const

/**
 * Every successful checkout session response of every test must be exactly its version's schema:
 * nothing missing, nothing extra at any depth (session responses are built without a schema pass,
 * `src/checkout/http/handlers.ts`). A response that is not fails the test that made it.
 */
export const checkSessionResponse = (
  method: string,
  path: string,
  status: number,
  body: unknown,
  version: string | null
) => {
  if (status !== 200 && status !== 201) return
  const route = path.split("?")[0]!
  checkUcpResponse(method, route, status, body)
  if (!/^\/checkout_sessions(\/[^/]+(\/(complete|cancel))?)?$/.test(route)) return
  if (method === "GET" && route === "/checkout_sessions") return
  const codec = checkoutCodecs[version as keyof typeof checkoutCodecs]
  if (codec === undefined) throw new Error(`${method} ${route}: ${status} to an API-Version that is not served`)
  const schema = route.endsWith("/complete") ? codec.completeResponse : codec.session.schema
  const decoded = Schema.decodeUnknownEither(schema, strictly)(body)
  if (Either.isLeft(decoded)) {
    throw new Error(`${method} ${route}: the response does not match its schema:\n${decoded.left.message}`)
  }
}

export const post = (path: string, body?: unknown, options: Omit<RequestOptions, "body"> = {}) =>
  request("POST", path, { ...options, ...(body !== undefined ? { body } : {}) })

export const get = (path: string, options: RequestOptions = {}) => request("GET", path, options)

export const address = {
  name: "Ada Lovelace",
  line_one: "1 Main Street",
  city: "New York",
  state: "NY",
  country: "US",
  postal_code: "10001"
}

export const buyer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }

export const paymentData = {
  handler_id: "card_tokenized",
  instrument: { type: "card", credential: { type: "spt", token: "tok_visa" } }
}

/** Creates a ready-to-pay session for `items` and returns its body. */
export const createReadySession = (items: ReadonlyArray<{ id: string; quantity: number }>) =>
  Effect.map(post("/checkout_sessions", { items, buyer, fulfillment_address: address }), (response) => {
    if (response.status !== 201) throw new Error(`create failed: ${response.status} ${response.text}`)
    return response.body as {
      id: string
      status: string
      totals: Array<{ type: string; amount: number }>
      line_items: Array<unknown>
    }
  })
