/**
 * The fake's in-memory account: every object by id (maps keep creation order), the hidden facts
 * the API does not show (how a PaymentIntent's payment method behaves, which token it came from),
 * and the event log, appended to as Stripe appends to it whenever an object changes state.
 */
import { type FakeClock, newId, unixSeconds } from "./clock.ts"
import type { Charge, Dispute, GrantedToken, PaymentIntent, Refund, StripeEvent } from "./objects.ts"
import { snapshot } from "./objects.ts"
import type { Behavior } from "./scenarios.ts"
import type { ThreeDSecure } from "./three-d-secure.ts"

/** The request an action came from, as events record it (`request.id`, `request.idempotency_key`). */
export interface RequestContext {
  readonly requestId: string | null
  readonly idempotencyKey: string | null
}

export const NO_REQUEST: RequestContext = { requestId: null, idempotencyKey: null }

export interface Source {
  readonly behavior: Behavior
  readonly tokenId: string | null
  readonly last4: string
  readonly brand: string
}

export class FakeState {
  readonly paymentIntents = new Map<string, PaymentIntent>()
  readonly charges = new Map<string, Charge>()
  readonly refunds = new Map<string, Refund>()
  readonly tokens = new Map<string, GrantedToken>()
  readonly disputes = new Map<string, Dispute>()
  readonly events = new Map<string, StripeEvent>()
  /** PaymentIntent id → the payment method attached to it. */
  readonly sources = new Map<string, Source>()
  /** PaymentIntent id → the third-party 3-D Secure given for its confirmation. */
  readonly threeDSecure = new Map<string, ThreeDSecure>()
  /** Token id → what confirming with it does. */
  readonly tokenBehaviors = new Map<string, Behavior>()
  /** PaymentIntent id → what it holds of a token while processing or awaiting capture. */
  readonly holds = new Map<string, { readonly tokenId: string; readonly amount: number }>()
  /** The base URL of the running server (for `next_action.redirect_to_url.url`). */
  baseUrl = "http://127.0.0.1"

  constructor(
    readonly clock: FakeClock,
    readonly apiVersion: string,
    private readonly published: (event: StripeEvent) => void
  ) {}

  now(): number {
    return unixSeconds(this.clock)
  }

  /** Appends an event whose `data.object` is a snapshot of `object` now, and hands it to delivery. */
  emit(type: string, object: unknown, request: RequestContext = NO_REQUEST): StripeEvent {
    const event: StripeEvent = {
      id: newId("evt"),
      object: "event",
      api_version: this.apiVersion,
      created: this.now(),
      data: { object: snapshot(object) },
      livemode: false,
      pending_webhooks: 0,
      request: { id: request.requestId, idempotency_key: request.idempotencyKey },
      type
    }
    this.events.set(event.id, event)
    this.published(event)
    return event
  }
}
