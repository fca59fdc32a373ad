/**
 * The order-event sender (CONTRACT §8, role `webhook_sender`): delivers the outbox of
 * `OrderStore` to `WEBHOOK_URL`.
 *
 * - `deliverDue` claims due events (a lease in a short transaction, `FOR UPDATE SKIP LOCKED`, so
 *   any number of processes may run it; only the lowest pending event of each order is claimable,
 *   so the events of one order arrive in order), POSTs them concurrently outside any transaction,
 *   and records the round's results in one store call. No transaction is held during the HTTP call: the default target is this process's
 *   own receiver, which needs the database too (and the embedded one has a single connection).
 * - Request: the exact JSON body in the ACP version the receiver is configured for
 *   (`WEBHOOK_API_VERSION`; `order-event-wire/`), the same bytes on every attempt while that
 *   setting stays; `Content-Type: application/json`, `API-Version: <that version>` (the official
 *   webhook files define no such header; receivers that do not know it ignore it),
 *   `Merchant-Signature: t=<unix>,v1=<hex HMAC>` over `t + "." + body` (signed afresh at each
 *   attempt), `Request-Id: <event id>`.
 * - Result: 2xx → delivered; network error, timeout, 408, 429 (honouring `Retry-After`), 5xx →
 *   retry after full-jitter exponential backoff (`retryDecision`), unless the next attempt would
 *   fall past `WEBHOOK_RETRY_HORIZON_SECONDS` after the first one → dead; any other status → dead
 *   at once.
 * - A lease outlives the HTTP timeout; if a process dies mid-delivery, the event becomes due again
 *   when the lease ends (at-least-once: the receiver deduplicates by Request-Id).
 * Time is the Effect Clock and the jitter the Effect Random, so tests drive both.
 */
import { Clock, Context, Duration, Effect, Either, Layer, Option, Random, Redacted, Schedule } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig, type AppConfigShape } from "../../platform/config.ts"
import { signPayload } from "../../shared/hmac-signature.ts"
import { type DeliveryResponse, isPastHorizon, retryDecision } from "../model/delivery-retry.ts"
import { type FinishedAttempt, OrderStore, type OutboxEvent } from "../order-store.ts"
import { OutboxSignal } from "../outbox-signal.ts"
import { WebhookTransport } from "../webhook-transport.ts"
import { ORDER_EVENT_WIRES } from "../wire/acp/versions.ts"

export const ORDER_EVENTS_PATH = "/agentic_checkout/webhooks/order_events"

/** `WEBHOOK_URL`, else this process's own receiver on the loopback address (PUBLIC_BASE_URL may not be reachable from here). */
export const webhookTargetUrl = (config: AppConfigShape): string => {
  if (config.webhookUrl._tag === "Some") return config.webhookUrl.value
  const wildcard = config.host === "0.0.0.0" || config.host === "::" || config.host === ""
  const host = wildcard ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host
  const scheme = config.tls._tag === "Some" ? "https" : "http"
  return `${scheme}://${host}:${config.port}${ORDER_EVENTS_PATH}`
}

export interface WebhookSenderOptions {
  /** Per-request timeout; default 10 s. */
  readonly timeout?: Duration.DurationInput
  /** How long a claim keeps other workers off an event; default 60 s (must exceed the timeout). */
  readonly lease?: Duration.DurationInput
  /** Events delivered concurrently per round; default 16. */
  readonly batchSize?: number
}

export interface DeliveryReport {
  readonly eventId: string
  readonly attempt: number
  readonly outcome: "delivered" | "retry" | "dead"
  readonly status: number | null
}

export interface WebhookSenderShape {
  /** One round: claims due events and delivers them; reports what happened to each. */
  readonly deliverDue: Effect.Effect<ReadonlyArray<DeliveryReport>, StorageError>
  /** The most events a round claims. */
  readonly batchSize: number
}

export class WebhookSender extends Context.Tag("acp/WebhookSender")<WebhookSender, WebhookSenderShape>() {}

export const makeWebhookSender = Effect.fnUntraced(function*(options: WebhookSenderOptions = {}) {
  const store = yield* OrderStore
  const config = yield* AppConfig
  const transport = yield* WebhookTransport
  const url = webhookTargetUrl(config)
  const version = config.webhookApiVersion
  const eventBody = ORDER_EVENT_WIRES[version].body
  const timeout = Duration.decode(options.timeout ?? "10 seconds")
  const leaseMs = Duration.toMillis(options.lease ?? "60 seconds")
  const batchSize = Math.max(1, options.batchSize ?? 16)
  const horizonMs = config.webhookRetryHorizonSeconds * 1000

  /** One POST: the response status and Retry-After, or a network problem (incl. no answer in time). */
  const post = (event: OutboxEvent) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const body = eventBody(event.payload)
      const headers = {
        "content-type": "application/json",
        "merchant-signature": signPayload(Redacted.value(config.webhookSecret), Math.floor(now / 1000), body),
        "request-id": event.id,
        "api-version": version
      }
      return Effect.either(transport.post({ url, headers, body }, timeout))
    })

  /** One attempt: the POST and what to record of it. */
  const attempt = Effect.fnUntraced(function*(event: OutboxEvent) {
    const posted = yield* post(event)
    const result = Either.isRight(posted)
      ? { status: posted.right.status, retryAfter: posted.right.retryAfter, error: null }
      : { status: null, retryAfter: undefined, error: posted.left.reason }
    const now = yield* Clock.currentTimeMillis
    const random = yield* Random.next
    const response: DeliveryResponse = result.status === null ? { networkError: true } : { status: result.status }
    const decision = retryDecision(response, event.attempts, result.retryAfter, { random, nowMs: now })
    const nextAttemptAt = now + decision.delayMs
    const outcome = decision.outcome === "delivered"
      ? "delivered" as const
      : decision.outcome === "dead_letter" || isPastHorizon(event.firstAttemptAt ?? now, nextAttemptAt, horizonMs)
      ? "dead" as const
      : "retry" as const
    const lastError = result.error ?? (outcome === "delivered" ? null : `HTTP ${result.status}`)
    const finished: FinishedAttempt = {
      id: event.id,
      attempt: event.attempts,
      result: {
        state: outcome === "retry" ? "pending" : outcome,
        nextAttemptAt: outcome === "retry" ? nextAttemptAt : now,
        lastStatus: result.status,
        lastError,
        at: now
      }
    }
    const report: DeliveryReport = { eventId: event.id, attempt: event.attempts, outcome, status: result.status }
    return { finished, report, delayMs: decision.delayMs }
  })

  /**
   * One round: the claimed events are posted concurrently and their results recorded together,
   * in one store call, once every POST of the round has answered or timed out (well within the
   * lease). A process that dies before that records nothing: the leases run out and the events
   * are sent again (at least once; the receiver deduplicates by Request-Id).
   */
  const deliverDue: WebhookSenderShape["deliverDue"] = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const claimed = yield* store.claimDue(now, batchSize, leaseMs)
    const attempts = yield* Effect.forEach(claimed, attempt, { concurrency: batchSize })
    yield* store.finishAttempts(attempts.map((a) => a.finished))
    for (const { delayMs, finished, report } of attempts) {
      if (report.outcome === "dead") {
        yield* Effect.logWarning(
          `order event ${report.eventId} dead-lettered after ${report.attempt} attempts: ${finished.result.lastError}`
        )
      } else if (report.outcome === "retry") {
        yield* Effect.logInfo(
          `order event ${report.eventId} attempt ${report.attempt} failed (${finished.result.lastError}); retry in ${delayMs} ms`
        )
      }
    }
    return attempts.map((a) => a.report)
  })

  return WebhookSender.of({ deliverDue, batchSize })
})

/** The sender; needs `OrderStore`, `AppConfig` and a `WebhookTransport`. */
export const webhookSenderLayer = (options: WebhookSenderOptions = {}): Layer.Layer<
  WebhookSender,
  never,
  OrderStore | AppConfig | WebhookTransport
> => Layer.effect(WebhookSender, makeWebhookSender(options))

export const WebhookSenderLive = webhookSenderLayer()

/**
 * The background worker (role `webhook_sender`): `lanes` loops (default 4), each claiming its own
 * events (as separate processes do), a round every `interval` (default 1 s) when idle.
 * - The first lane goes again at once after a round that found events: events are delivered
 *   as soon as a round has room for them, and a quiet server's rounds take what came meanwhile.
 *   When idle it waits for events queued by this process (`OutboxSignal`) or the interval,
 *   whichever comes first; woken by events, it lets `gather` (default 100 ms) pass before its
 *   round, so that the events of the completions meanwhile go in the same round (each round costs
 *   a claim and a record statement): an order event goes out within about `gather` of the step
 *   that made it, instead of up to an interval later.
 * - The other lanes go again at once only after a full round (a backlog): a round lasts as long
 *   as its slowest POST, so one lane alone falls behind a busy server's completions; with them up
 *   to `lanes` × the batch size deliveries are in flight, and a lane waiting on a slow receiver
 *   holds up no other. Without a backlog they poll once an interval, spread evenly over it.
 * Failures and defects of a round are logged and the lane goes on.
 */
export const webhookSenderWorker = (
  interval: Duration.DurationInput = "1 second",
  lanes = 4,
  gather: Duration.DurationInput = "100 millis"
) =>
  // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
  Layer.scopedDiscard(Effect.gen(function*() {
    const config = yield* AppConfig
    if (!config.roles.has("webhook_sender")) return
    const sender = yield* WebhookSender
    const signal = yield* OutboxSignal
    yield* Effect.logInfo(`order events are sent to ${webhookTargetUrl(config)} in ACP ${config.webhookApiVersion}`)
    const lane = (busyAfter: number): Effect.Effect<void> => {
      const round: Effect.Effect<void> = sender.deliverDue.pipe(
        Effect.flatMap((reports) => (reports.length >= busyAfter ? round : Effect.void)),
        Effect.catchAllCause((cause) => Effect.logWarning("order event delivery round failed", cause))
      )
      return round
    }
    const count = Math.max(1, Math.floor(lanes))
    const spacing = Duration.divide(interval, count).pipe(Option.getOrElse(() => Duration.zero))
    const waitForEvents = Effect.flatMap(
      signal.waitForEvents(interval),
      (signalled) => (signalled ? Effect.sleep(gather) : Effect.void)
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(lane(1), waitForEvents)))
    for (let index = 1; index < count; index++) {
      yield* Effect.sleep(Duration.times(spacing, index)).pipe(
        Effect.zipRight(lane(sender.batchSize).pipe(Effect.repeat(Schedule.spaced(interval)))),
        Effect.forkScoped
      )
    }
  }))
