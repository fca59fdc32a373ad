import { describe, expect, it } from "@effect/vitest"
import { checkoutGroupFor } from "../../src/checkout/http/api.ts"
import {
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest
} from "../../src/checkout/session/schemas.ts"
import { checkoutCodecs } from "../../src/checkout/wire/acp/versions.ts"
import { DelegateGroup } from "../../src/delegate-payment/http/api.ts"
import { DelegatePaymentRequest } from "../../src/delegate-payment/model/delegate-payment.ts"
import { OrdersGroup } from "../../src/orders/http/api.ts"
import { RefundRequest, ShipRequest } from "../../src/orders/model/order.ts"
import { declaredPayload } from "../../src/platform/http/request-body.ts"
import { API_VERSION_NAMES } from "../../src/shared/api-versions.ts"
import { WebhookReceiverGroup } from "../../src/webhook-receiver/http/api.ts"
import { WebhookEvent } from "../../src/webhook-receiver/http/webhook.ts"

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
