/**
 * Helpers for order and order-event tests: orders made through the real checkout (a session
 * created over HTTP, then its order and `order_create` event written as the completion writes them), and
 * fake transports for the sender — scripted answers, or the in-process application itself (the
 * sender posting to this process's own receiver).
 */
import { Clock, Effect, Layer, Ref, Schema } from "effect"
import { Session } from "../../src/checkout/session/session.ts"
import { OrderEvents } from "../../src/orders/order-service.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { WebhookTransport, WebhookTransportError } from "../../src/orders/webhook-transport.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { appHandler, createReadySession } from "./http.ts"

/** A payment provider that is never called (these tests do not complete checkouts over HTTP). */
export const UnusedPaymentProvider = Layer.succeed(PaymentProvider, {} as never)

let orderCounter = 0

/** Creates a session over HTTP and records its order as the completion does; returns the full order. */
export const createOrder = (
  items: ReadonlyArray<{ id: string; quantity: number }> = [{ id: "tshirt-classic", quantity: 2 }]
) =>
  Effect.gen(function*() {
    const created = yield* createReadySession(items)
    // The stored session is the API session plus its requested items.
    const session = Schema.decodeUnknownSync(Session)({
      ...created,
      items: (created.line_items as Array<{ item: unknown }>).map((line) => line.item)
    })
    const events = yield* OrderEvents
    const store = yield* OrderStore
    const id = `ord_test${++orderCounter}_${Math.random().toString(36).slice(2, 8)}`
    const { event, stored } = yield* events.orderCreated({
      order: { id, checkout_session_id: session.id, permalink_url: `https://merchant.test/orders/${id}` },
      lineItems: session.line_items,
      totals: session.totals,
      currency: session.currency
    })
    yield* store.saveOrderWithEvent(stored, event)
    return stored.order
  })

export interface SentRequest {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
  /** Clock time of the request, epoch ms. */
  readonly at: number
}

/** What a scripted endpoint answers: a status (with headers), a network failure, or the app itself. */
export type Answer =
  | { readonly status: number; readonly headers?: Record<string, string> }
  | "network_error"
  | "loopback"

/**
 * A fake `WebhookTransport` recording every request. Answers come from `script` in order; once it
 * is used up, `fallback` (default 200). `"loopback"` hands the request to the in-process app.
 */
export const scriptedTransport = (script: ReadonlyArray<Answer>, fallback: Answer = { status: 200 }) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<SentRequest>>([])
    const remaining = yield* Ref.make<ReadonlyArray<Answer>>(script)
    const handler = yield* appHandler
    const transport = WebhookTransport.of({
      post: ({ body, headers, url }) =>
        Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          yield* Ref.update(sent, (list) => [...list, { url, headers: { ...headers }, body, at }])
          const answer = yield* Ref.modify(remaining, (list) => [list[0] ?? fallback, list.slice(1)] as const)
          if (answer === "network_error") {
            return yield* new WebhookTransportError({ reason: "ECONNREFUSED" })
          }
          if (answer === "loopback") {
            const response = yield* Effect.promise(() => handler(new Request(url, { method: "POST", headers, body })))
            yield* Effect.promise(() => response.text())
            return { status: response.status, retryAfter: response.headers.get("retry-after") ?? undefined }
          }
          return { status: answer.status, retryAfter: answer.headers?.["retry-after"] }
        })
    })
    return { transport, sent: Ref.get(sent) }
  })
