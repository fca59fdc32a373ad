import { describe, expect, it } from "@effect/vitest"
import { checkoutGroupFor } from "../../src/checkout/checkout-api.ts"
import {
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest
} from "../../src/checkout/checkout-schemas.ts"
import { checkoutCodecs } from "../../src/checkout/wire/checkout-codecs.ts"
import { DelegateGroup } from "../../src/delegate/delegate-api.ts"
import { DelegatePaymentRequest } from "../../src/delegate/delegate-payment.ts"
import { RefundRequest, ShipRequest } from "../../src/orders/order-schemas.ts"
import { OrdersGroup } from "../../src/orders/orders-api.ts"
import { declaredPayload } from "../../src/platform/http/request-body.ts"
import { API_VERSION_NAMES } from "../../src/shared/api-versions.ts"
import { WebhookReceiverGroup } from "../../src/webhooks/webhook-receiver-api.ts"
import { WebhookEvent } from "../../src/webhooks/webhook.ts"

describe("the payload an endpoint declares", () => {
  it("is the schema its route decodes the body with", () => {
    // Checkout: each version's group declares the schemas its codec decodes with.
    for (const version of API_VERSION_NAMES) {
      const group = checkoutGroupFor(version)
      const codec = checkoutCodecs[version]
      expect(declaredPayload(group, "create")).toBe(codec.create.schema)
      expect(declaredPayload(group, "update")).toBe(codec.update.schema)
      expect(declaredPayload(group, "complete")).toBe(codec.complete.schema)
    }
    expect(checkoutCodecs["2025-09-29"].create.schema).toBe(CheckoutSessionCreateRequest)
    expect(checkoutCodecs["2025-09-29"].update.schema).toBe(CheckoutSessionUpdateRequest)
    expect(checkoutCodecs["2025-09-29"].complete.schema).toBe(CheckoutSessionCompleteRequest)
    expect(declaredPayload(DelegateGroup, "tokenize")).toBe(DelegatePaymentRequest)
    expect(declaredPayload(OrdersGroup, "ship")).toBe(ShipRequest)
    expect(declaredPayload(OrdersGroup, "refund")).toBe(RefundRequest)
    expect(declaredPayload(WebhookReceiverGroup, "orderEvents")).toBe(WebhookEvent)
  })

  it("is required of a route that reads its body", () => {
    expect(() => declaredPayload(OrdersGroup, "confirm")).toThrow("orders.confirm declares no payload schema")
  })
})
