/**
 * `POST /stripe/webhooks`: Stripe's events about the account's payments, refunds and disputes. Its
 * only credential is the `Stripe-Signature` header, checked over the raw body; there is no bearer
 * token and no idempotency key (Stripe's event id is what a redelivery repeats).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { NotFoundWire, TooManyRequestsWire } from "../../platform/http/errors.ts"
import { featureApi } from "../../platform/http/feature-api.ts"
import { optional } from "../../shared/schema-helpers.ts"

/** Stripe's Event object, as far as this documents it (the body is verified and read raw). */
export const StripeEventBody = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("event"),
  type: Schema.String,
  data: Schema.Struct({ object: Schema.Unknown })
}).annotations({ identifier: "StripeEvent" })

export const StripeWebhookAck = Schema.Struct({
  received: Schema.Literal(true),
  /** `applied`: recorded and acted on; `replayed`: this event was already recorded, nothing changed. */
  outcome: Schema.Literal("applied", "replayed")
}).annotations({ identifier: "StripeWebhookAck" })

export class StripeWebhooksGroup extends HttpApiGroup.make("stripeWebhooks")
  .add(
    HttpApiEndpoint.post("receive", "/stripe/webhooks")
      .setHeaders(Schema.Struct({
        "stripe-signature": optional(
          Schema.String.annotations({
            description: "t=<unix seconds>,v1=<hex HMAC-SHA256(whsec, t + \".\" + raw body)>"
          })
        )
      }))
      .setPayload(StripeEventBody)
      .addSuccess(StripeWebhookAck)
      .addError(NotFoundWire)
      .addError(TooManyRequestsWire)
      .annotate(
        OpenApi.Description,
        "Stripe's webhook endpoint (only with STRIPE_WEBHOOK_SECRET set, else 404): the signature is verified " +
          "with the SDK (300 s tolerance), each event is acted on once; refunds and disputes become order " +
          "adjustments, PaymentIntent outcomes settle a pending payment"
      )
  )
  .annotate(OpenApi.Description, "Stripe webhooks (the merchant's Stripe account)")
{}

export const StripeWebhooksApi = featureApi(StripeWebhooksGroup)
