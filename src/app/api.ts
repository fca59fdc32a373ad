/** The HTTP API: `Api` is what the server serves, `apiFor(version)` what one ACP version sees (its OpenAPI). */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Context, Schema } from "effect"
import { CARTS_PATH, CartsGroup } from "../carts/http/api.ts"
import { CartPageGroup } from "../carts/http/handoff-api.ts"
import { ProductsGroup } from "../catalog/http/api.ts"
import { CheckoutGroup, checkoutGroupFor } from "../checkout/http/api.ts"
import { ConsoleGroup } from "../console/http/api.ts"
import { AcsGroup, DelegateAuthenticationGroup } from "../delegate-authentication/http/api.ts"
import { DelegateGroup, delegateGroupFor } from "../delegate-payment/http/api.ts"
import { FEEDS_PATH, FeedsGroup } from "../feeds/http/api.ts"
import { FeedPublicationGroup } from "../feeds/http/publication-api.ts"
import { hasRequestNotIdempotentType } from "../idempotency/idempotency-errors.ts"
import { isReplayableStatus } from "../idempotency/model/idempotency.ts"
import { IDEMPOTENCY_RULES } from "../idempotency/model/rules.ts"
import { OrdersGroup, WebhookDeliveriesGroup } from "../orders/http/api.ts"
import { OrderPageGroup } from "../orders/http/order-page-api.ts"
import { NotFoundWire } from "../platform/http/errors.ts"
import { API_ID, withSharedErrors } from "../platform/http/feature-api.ts"
import { documentRequestHeaders, documentResponseHeaders, withoutErrorTypes } from "../platform/http/openapi-headers.ts"
import { VersionedIdempotency } from "../platform/http/route-declarations.ts"
import { type ApiVersionName, isAtLeast } from "../shared/api-versions.ts"
import { StripeWebhooksGroup } from "../stripe/http/api.ts"
import { UCP_REST_PATH, UcpCheckoutGroup } from "../ucp/http/api.ts"
import { UCP_PROFILE_PATH, UcpDiscoveryGroup } from "../ucp/http/discovery-api.ts"
import { ReceivedOrdersGroup, WebhookReceiverGroup } from "../webhook-receiver/http/api.ts"
import { DiscoveryResponse } from "./discovery.ts"

export const Health = Schema.Struct({ status: Schema.Literal("ok") })
export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  storage: Schema.Literal("ok")
})

export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true })
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Readiness))
  .add(
    HttpApiEndpoint.get("wellKnown", "/.well-known/acp.json")
      .addSuccess(DiscoveryResponse)
      // Only when no role of this process serves an ACP API (the RFC: "seller does not support ACP").
      .addError(NotFoundWire)
      .annotate(
        OpenApi.Description,
        "The public discovery document (no authentication; `Cache-Control: public, max-age=3600`)"
      )
  )
  .annotate(OpenApi.Description, "Health, readiness and discovery")
{}

const assemble = <Checkout extends HttpApiGroup.HttpApiGroup.Any, Delegate extends HttpApiGroup.HttpApiGroup.Any>(
  checkout: Checkout,
  delegate: Delegate
) =>
  withSharedErrors(
    HttpApi.make(API_ID)
      .add(checkout)
      .add(delegate)
      .add(SystemGroup)
      .add(OrdersGroup)
      .add(WebhookDeliveriesGroup)
      .add(WebhookReceiverGroup)
      .add(ReceivedOrdersGroup)
      .add(DelegateAuthenticationGroup)
      .add(AcsGroup)
      .add(OrderPageGroup)
      .add(ConsoleGroup)
      .add(StripeWebhooksGroup)
      .add(ProductsGroup)
      .add(FeedsGroup)
      .add(FeedPublicationGroup)
      .add(CartsGroup)
      .add(CartPageGroup)
      .add(UcpCheckoutGroup)
      .add(UcpDiscoveryGroup)
  )

export class Api extends assemble(CheckoutGroup, DelegateGroup) {}

/** The groups whose idempotency rules follow the version (the OpenAPI tags of their operations). */
const versionedGroups = (
  groups: ReadonlyArray<{ readonly identifier: string; readonly annotations: Context.Context<never> }>
): ReadonlyArray<string> =>
  groups.filter((group) => Context.getOrElse(group.annotations, VersionedIdempotency, () => false))
    .map((group) => group.identifier)

/** The Delegate Authentication and Feed APIs are 2026-04-17's: the documents of older versions leave them out. */
const withoutAuthentication = (spec: Record<string, any>): Record<string, any> => {
  const groups = new Set<string>([DelegateAuthenticationGroup.identifier, AcsGroup.identifier, FeedsGroup.identifier])
  return {
    ...spec,
    paths: Object.fromEntries(
      Object.entries(spec.paths ?? {}).filter(([path]) =>
        !path.startsWith("/delegate_authentication") && path !== FEEDS_PATH && !path.startsWith(`${FEEDS_PATH}/`)
      )
    ),
    tags: (spec.tags ?? []).filter((tag: { readonly name: string }) => !groups.has(tag.name))
  }
}

/** The Cart API is 2026-04-17's: the documents of older versions leave it out. */
const withoutCarts = (spec: Record<string, any>): Record<string, any> => ({
  ...spec,
  paths: Object.fromEntries(
    Object.entries(spec.paths ?? {}).filter(([path]) => path !== CARTS_PATH && !path.startsWith(`${CARTS_PATH}/`))
  ),
  tags: (spec.tags ?? []).filter((tag: { readonly name: string }) => tag.name !== CartsGroup.identifier)
})

/** UCP is another protocol, with its own documents (the release's OpenAPI): no ACP document shows it. */
const withoutUcp = (spec: Record<string, any>): Record<string, any> => ({
  ...spec,
  paths: Object.fromEntries(
    Object.entries(spec.paths ?? {}).filter(([path]) =>
      path !== UCP_PROFILE_PATH && path !== UCP_REST_PATH && !path.startsWith(`${UCP_REST_PATH}/`)
    )
  ),
  tags: (spec.tags ?? []).filter((tag: { readonly name: string }) =>
    tag.name !== UcpCheckoutGroup.identifier && tag.name !== UcpDiscoveryGroup.identifier
  )
})

export const apiFor = (version: ApiVersionName) => {
  const checkout = checkoutGroupFor(version)
  const delegate = delegateGroupFor(version)
  const requestHeaders = documentRequestHeaders({
    apiVersion: version,
    idempotencyKeyRequiredIn: IDEMPOTENCY_RULES[version].keyRequired
      ? versionedGroups([checkout, delegate, CartsGroup])
      : []
  })
  const responseHeaders = documentResponseHeaders({ isReplayableStatus })
  const errorTypes = withoutErrorTypes(hasRequestNotIdempotentType(version) ? [] : ["request_not_idempotent"])
  const since0417 = isAtLeast(version, "2026-04-17")
  const authentication = since0417 ? (spec: Record<string, any>) => spec : withoutAuthentication
  const carts = since0417 ? (spec: Record<string, any>) => spec : withoutCarts
  return assemble(checkout, delegate)
    .annotate(
      OpenApi.Transform,
      (spec) => withoutUcp(carts(authentication(errorTypes(responseHeaders(requestHeaders(spec))))))
    )
    .annotate(OpenApi.Title, `Agentic Checkout Service: ACP ${version}`)
    .annotate(OpenApi.Version, version)
    .annotate(
      OpenApi.Description,
      `Agentic Commerce Protocol ${version}: the Checkout Session API, the Delegate Payment API` +
        (since0417 ? ", the Cart API" : "") + " and " +
        `order-event webhooks, as requests with \`API-Version: ${version}\` send and receive them. ` +
        "Every accepted version has its own document at `/openapi/<version>.json`."
    )
}
