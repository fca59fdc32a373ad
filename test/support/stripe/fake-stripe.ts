/**
 * A Stripe-compatible test server for the payment provider's tests, written from Stripe's public
 * API reference: PaymentIntents confirmed with shared payment granted tokens, Refunds, the token
 * test helpers, idempotent requests, signed webhooks — plus what only a test can do: choose how a
 * token's payments end, inject faults, settle payments, open disputes, and read the whole state.
 *
 *   const fake = await FakeStripe.start()
 *   const stripe = new Stripe(fake.secretKey, { ...fake.clientConfig(), maxNetworkRetries: 0 })
 *   const token = fake.grantToken({ behavior: "declines", declineCode: "insufficient_funds" })
 */
import Stripe from "stripe"
import { type FakeClock, newId, systemClock } from "./clock.ts"
import { Faults, type FaultSpec } from "./faults.ts"
import { createToken, revokeToken } from "./granted-tokens.ts"
import { IdempotencyStore } from "./idempotency.ts"
import type { Charge, Dispute, GrantedToken, PaymentIntent, Refund, StripeEvent } from "./objects.ts"
import { snapshot } from "./objects.ts"
import { finishAction, settle } from "./payment-attempt.ts"
import { findIntent } from "./payment-intents.ts"
import { closeDispute, openDispute } from "./refunds.ts"
import { type Behavior, paymentMethodFor } from "./scenarios.ts"
import { FakeServer, type RecordedRequest } from "./server.ts"
import { FakeState } from "./state.ts"
import { type Delivery, type SendOptions, type WebhookEndpoint, Webhooks } from "./webhooks.ts"

export interface FakeStripeOptions {
  /** The secret key requests must carry (default: a fresh `sk_test_…`). */
  readonly secretKey?: string
  /** Further accepted keys, each its own account for idempotency. */
  readonly otherSecretKeys?: ReadonlyArray<string>
  /** The Stripe-Version every request must send (default: the SDK's pinned `Stripe.API_VERSION`). */
  readonly apiVersion?: string
  readonly clock?: FakeClock
  /** The port on 127.0.0.1 (default: any free one). */
  readonly port?: number
}

export interface GrantOptions {
  /** How payments with the token end (default `succeeds`). */
  readonly behavior?: "succeeds" | "declines" | "requires_action" | "processing"
  /** For `declines`: the issuer's reason, e.g. `insufficient_funds`, `card_declined`, `expired_card`. */
  readonly declineCode?: string
  /** `usage_limits.max_amount`, minor units (default 100000). */
  readonly maxAmount?: number
  /** `usage_limits.currency` (default `usd`). */
  readonly currency?: string
  /** `usage_limits.expires_at`, unix seconds (default none). */
  readonly expiresAt?: number
  readonly sharedMetadata?: Record<string, string>
}

const behaviorOf = (options: GrantOptions): Behavior => {
  switch (options.behavior ?? "succeeds") {
    case "declines":
      return { kind: "declines", declineCode: options.declineCode ?? "generic_decline" }
    case "requires_action":
      return { kind: "requires_action" }
    case "processing":
      return { kind: "processing" }
    default:
      return { kind: "succeeds" }
  }
}

export class FakeStripe {
  private constructor(
    readonly secretKey: string,
    readonly apiVersion: string,
    readonly clock: FakeClock,
    readonly port: number,
    private readonly state: FakeState,
    private readonly server: FakeServer,
    private readonly faultQueue: Faults,
    private readonly webhooks: Webhooks
  ) {}

  static async start(options: FakeStripeOptions = {}): Promise<FakeStripe> {
    const clock = options.clock ?? systemClock
    const secretKey = options.secretKey ?? newId("sk_test", 32)
    const apiVersion = options.apiVersion ?? Stripe.API_VERSION
    const webhooks = new Webhooks(clock)
    const state = new FakeState(clock, apiVersion, (event) => webhooks.published(event))
    const faults = new Faults()
    const server = new FakeServer(state, new IdempotencyStore(clock), faults, {
      secretKeys: [secretKey, ...(options.otherSecretKeys ?? [])],
      apiVersion,
      authenticate: (id, outcome) => {
        const intent = findIntent(state, id)
        const next = intent.next_action
        finishAction(state, intent, outcome)
        return next?.type === "redirect_to_url" ? next.redirect_to_url.return_url : undefined
      }
    })
    const port = await server.start(options.port)
    state.baseUrl = `http://127.0.0.1:${port}`
    return new FakeStripe(secretKey, apiVersion, clock, port, state, server, faults, webhooks)
  }

  /** `new Stripe(fake.secretKey, { ...fake.clientConfig(), maxNetworkRetries: 0 })` talks to the fake. */
  clientConfig(): { host: string; port: number; protocol: "http"; apiVersion: typeof Stripe.API_VERSION } {
    // The SDK's types pin its own version; a fake expecting another one still gets it sent.
    return {
      host: "127.0.0.1",
      port: this.port,
      protocol: "http",
      apiVersion: this.apiVersion as typeof Stripe.API_VERSION
    }
  }

  get url(): string {
    return this.state.baseUrl
  }

  stop(): Promise<void> {
    return this.server.stop()
  }

  // --- scenarios -------------------------------------------------------------------------------

  /** A granted token (as the test helper makes one) whose payments end as `options.behavior` says. */
  grantToken(options: GrantOptions = {}): GrantedToken {
    const behavior = behaviorOf(options)
    return snapshot(createToken(this.state, {
      payment_method: paymentMethodFor(behavior),
      usage_limits: {
        currency: options.currency ?? "usd",
        max_amount: options.maxAmount ?? 100_000,
        ...(options.expiresAt === undefined ? {} : { expires_at: options.expiresAt })
      },
      ...(options.sharedMetadata === undefined ? {} : { shared_metadata: options.sharedMetadata })
    }, behavior))
  }

  revokeToken(id: string): GrantedToken {
    return snapshot(revokeToken(this.state, id))
  }

  /** Moves a `processing` PaymentIntent on, with the events Stripe would send. */
  settleProcessing(id: string, outcome: "succeeded" | "failed"): PaymentIntent {
    const intent = findIntent(this.state, id)
    settle(this.state, intent, outcome)
    return snapshot(intent)
  }

  /** The customer completes (or fails) 3-D Secure for a PaymentIntent in `requires_action`. */
  completeAction(id: string, outcome: "succeeded" | "failed"): PaymentIntent {
    const intent = findIntent(this.state, id)
    finishAction(this.state, intent, outcome)
    return snapshot(intent)
  }

  /** The cardholder disputes a payment (a PaymentIntent's latest charge, or a charge). */
  openDispute(paymentIntentOrChargeId: string, reason = "fraudulent"): Dispute {
    const chargeId = paymentIntentOrChargeId.startsWith("pi_")
      ? findIntent(this.state, paymentIntentOrChargeId).latest_charge!
      : paymentIntentOrChargeId
    return snapshot(openDispute(this.state, chargeId, reason))
  }

  closeDispute(id: string, status: "won" | "lost"): Dispute {
    return snapshot(closeDispute(this.state, id, status))
  }

  // --- faults ----------------------------------------------------------------------------------

  /** Strikes the next `times` requests to `path` (see faults.ts for where each kind strikes). */
  fail(spec: FaultSpec): void {
    this.faultQueue.arm(spec)
  }

  clearFaults(): void {
    this.faultQueue.clear()
  }

  // --- webhooks --------------------------------------------------------------------------------

  /** Every later event enabled for it is POSTed to `url`, signed with the returned `secret`. */
  addWebhookEndpoint(options: { url: string; events?: ReadonlyArray<string>; secret?: string }): WebhookEndpoint {
    return this.webhooks.addEndpoint(options)
  }

  /** Sends an event again (a replay), or with a stale timestamp, or badly signed. */
  resendEvent(eventId: string, options: SendOptions = {}): Promise<Array<Delivery>> {
    const event = this.state.events.get(eventId)
    if (event === undefined) throw new Error(`no event ${eventId}`)
    return this.webhooks.send(event, options)
  }

  /** Resolves once every webhook queued so far has been delivered. */
  webhooksDelivered(): Promise<void> {
    return this.webhooks.idle()
  }

  deliveries(): ReadonlyArray<Delivery> {
    return [...this.webhooks.deliveries]
  }

  // --- inspection (snapshots, oldest first) ----------------------------------------------------

  paymentIntents(): ReadonlyArray<PaymentIntent> {
    return snapshot([...this.state.paymentIntents.values()])
  }

  paymentIntent(id: string): PaymentIntent {
    return snapshot(findIntent(this.state, id))
  }

  charges(): ReadonlyArray<Charge> {
    return snapshot([...this.state.charges.values()])
  }

  refunds(): ReadonlyArray<Refund> {
    return snapshot([...this.state.refunds.values()])
  }

  tokens(): ReadonlyArray<GrantedToken> {
    return snapshot([...this.state.tokens.values()])
  }

  events(type?: string): ReadonlyArray<StripeEvent> {
    return snapshot([...this.state.events.values()].filter((event) => type === undefined || event.type === type))
  }

  /** Every request received, in order, with what it was answered. */
  requests(filter: { method?: string; path?: string } = {}): ReadonlyArray<RecordedRequest> {
    return this.server.requests.filter((request) =>
      (filter.method === undefined || request.method === filter.method) &&
      (filter.path === undefined || request.path === filter.path)
    )
  }
}
