/**
 * Webhook delivery (Webhooks, "Verify webhook signatures"): each event goes to every endpoint
 * enabled for its type as a JSON POST with `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256
 * of "<t>.<payload>" keyed by the endpoint's whsec_ secret>`. The header comes from the SDK's own
 * `webhooks.generateTestHeaderString`, so it is Stripe's signature by construction. A test can
 * send an event again (Stripe retries and may deliver twice), with a stale timestamp, or badly signed.
 */
import Stripe from "stripe"
import { type FakeClock, newId, unixSeconds } from "./clock.ts"
import type { StripeEvent } from "./objects.ts"

export interface WebhookEndpoint {
  readonly id: string
  readonly url: string
  /** The signing secret, `whsec_…`. */
  readonly secret: string
  /** Event types it receives; `*` for all (Stripe's `enabled_events`). */
  readonly events: ReadonlyArray<string>
}

export interface Delivery {
  readonly eventId: string
  readonly type: string
  readonly endpointId: string
  readonly payload: string
  readonly signature: string
  /** The endpoint's HTTP status, or null when it could not be reached. */
  readonly status: number | null
  readonly error: string | null
}

export interface SendOptions {
  /** Only to this endpoint (default: every endpoint enabled for the event's type). */
  readonly endpointId?: string
  /** The signed timestamp, unix seconds (default: the fake's clock now). */
  readonly timestamp?: number
  /** Signed 10 minutes ago, past the SDK's default 300 s tolerance. */
  readonly stale?: boolean
  /** `bad`: signed with another secret, so verification must fail. */
  readonly signature?: "valid" | "bad"
}

// Only used to sign: it never sends a request.
const signer = new Stripe("sk_test_fake_webhook_signer")
const STALE_SECONDS = 600

export class Webhooks {
  readonly endpoints: Array<WebhookEndpoint> = []
  readonly deliveries: Array<Delivery> = []
  private queue: Promise<void> = Promise.resolve()

  constructor(private readonly clock: FakeClock) {}

  addEndpoint(options: { url: string; events?: ReadonlyArray<string>; secret?: string }): WebhookEndpoint {
    const endpoint: WebhookEndpoint = {
      id: newId("we"),
      url: options.url,
      secret: options.secret ?? newId("whsec", 32),
      events: options.events ?? ["*"]
    }
    this.endpoints.push(endpoint)
    return endpoint
  }

  private targets(event: StripeEvent, endpointId: string | undefined): Array<WebhookEndpoint> {
    return this.endpoints.filter((endpoint) =>
      endpointId === undefined
        ? endpoint.events.includes("*") || endpoint.events.includes(event.type)
        : endpoint.id === endpointId
    )
  }

  /** A new event: queued for every endpoint enabled for it (`pending_webhooks` counts them). */
  published(event: StripeEvent): void {
    const targets = this.targets(event, undefined)
    event.pending_webhooks = targets.length
    if (targets.length > 0) void this.send(event, {})
  }

  /** Sends `event` (again), signed as `options` say; resolves with the deliveries made. */
  send(event: StripeEvent, options: SendOptions): Promise<Array<Delivery>> {
    const payload = JSON.stringify(event, null, 2)
    const run = async () => {
      const made: Array<Delivery> = []
      for (const endpoint of this.targets(event, options.endpointId)) {
        const timestamp = options.timestamp ?? unixSeconds(this.clock) - (options.stale === true ? STALE_SECONDS : 0)
        const secret = options.signature === "bad" ? newId("whsec", 32) : endpoint.secret
        const signature = signer.webhooks.generateTestHeaderString({ payload, secret, timestamp })
        made.push(await this.post(event, endpoint, payload, signature))
      }
      return made
    }
    // Deliveries go one at a time, in the order the events happened.
    const result = this.queue.then(run)
    this.queue = result.then(() => undefined, () => undefined)
    return result
  }

  private async post(event: StripeEvent, endpoint: WebhookEndpoint, payload: string, signature: string) {
    let status: number | null = null
    let error: string | null = null
    try {
      const response = await fetch(endpoint.url, {
        method: "POST",
        headers: {
          "content-type": "application/json; charset=utf-8",
          "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
          "stripe-signature": signature
        },
        body: payload,
        signal: AbortSignal.timeout(10_000)
      })
      status = response.status
      await response.arrayBuffer()
    } catch (cause) {
      error = String(cause)
    }
    const delivery: Delivery = {
      eventId: event.id,
      type: event.type,
      endpointId: endpoint.id,
      payload,
      signature,
      status,
      error
    }
    this.deliveries.push(delivery)
    return delivery
  }

  /** Resolves once every delivery queued so far has been made. */
  idle(): Promise<void> {
    return this.queue
  }
}
