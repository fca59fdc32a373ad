import { describe, expect, it } from "@effect/vitest"
import { CheckoutGroup } from "../../src/checkout/checkout-api.ts"
import {
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest
} from "../../src/checkout/checkout-schemas.ts"
import { DelegateGroup } from "../../src/delegate/delegate-api.ts"
import { DelegatePaymentRequest } from "../../src/delegate/delegate-payment.ts"
import { RefundRequest, ShipRequest } from "../../src/orders/order-schemas.ts"
import { OrdersGroup } from "../../src/orders/orders-api.ts"
import { declaredPayload } from "../../src/platform/http/request-body.ts"
import { WebhookReceiverGroup } from "../../src/webhooks/webhook-receiver-api.ts"
import { WebhookEvent } from "../../src/webhooks/webhook.ts"

describe("the payload an endpoint declares", () => {
  it("is the schema its route decodes the body with", () => {
    expect(declaredPayload(CheckoutGroup, "create")).toBe(CheckoutSessionCreateRequest)
    expect(declaredPayload(CheckoutGroup, "update")).toBe(CheckoutSessionUpdateRequest)
    expect(declaredPayload(CheckoutGroup, "complete")).toBe(CheckoutSessionCompleteRequest)
    expect(declaredPayload(DelegateGroup, "tokenize")).toBe(DelegatePaymentRequest)
    expect(declaredPayload(OrdersGroup, "ship")).toBe(ShipRequest)
    expect(declaredPayload(OrdersGroup, "refund")).toBe(RefundRequest)
    expect(declaredPayload(WebhookReceiverGroup, "orderEvents")).toBe(WebhookEvent)
  })

  it("is required of a route that reads its body", () => {
    expect(() => declaredPayload(OrdersGroup, "confirm")).toThrow("orders.confirm declares no payload schema")
  })
})
