/**
 * The order-event sender (CONTRACT §8, role `webhook_sender`): delivers the outbox to `WEBHOOK_URL` at
 * least once (the receiver deduplicates by `Request-Id`). No transaction is held during a POST: the
 * default target is this process's own receiver, which needs the database too. Claims, leases and
 * rounds: `docs/concurrency.md`, "The order-event outbox"; bodies per version: `docs/order-events.md`.
 */
import { Clock, Context, Duration, Effect, Either, Layer, Option, Random, Redacted, Schedule } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig, type AppConfigShape } from "../../platform/config.ts"
import { selfBaseUrl } from "../../platform/self-base-url.ts"
import { signPayload } from "../../shared/hmac-signature.ts"
import { type DeliveryResponse, isPastHorizon, retryDecision } from "../model/delivery-retry.ts"
import { type FinishedAttempt, OrderStore, type OutboxEvent } from "../order-store.ts"
import { OutboxSignal } from "../outbox-signal.ts"
import { WebhookTransport } from "../webhook-transport.ts"
import { ORDER_EVENT_WIRES } from "../wire/acp/versions.ts"

export const ORDER_EVENTS_PATH = "/agentic_checkout/webhooks/order_events"

/** `WEBHOOK_URL`, else this process's receiver on the loopback address (PUBLIC_BASE_URL may be unreachable here). */
export const webhookTargetUrl = (config: AppConfigShape): string => {
  if (config.webhookUrl._tag === "Some") return config.webhookUrl.value
  return `${selfBaseUrl(config.host, config.port, config.tls._tag === "Some")}${ORDER_EVENTS_PATH}`
}

export interface WebhookSenderOptions {
  /** Per-request timeout; default 10 s. */
  readonly timeout?: Duration.DurationInput
  /** How long a claim keeps other workers off an event; default 60 s (must exceed the timeout). */
  readonly lease?: Duration.DurationInput
  /** Events claimed and posted concurrently per round; default 16. */
  readonly batchSize?: number
}

export interface DeliveryReport {
  readonly eventId: string
  readonly attempt: number
  readonly outcome: "delivered" | "retry" | "dead"
  readonly status: number | null
}

export interface WebhookSenderShape {
  /** One round: claims due events, posts them, records the results. */
  readonly deliverDue: Effect.Effect<ReadonlyArray<DeliveryReport>, StorageError>
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

  /** Results are recorded together once every POST has answered or timed out, well within the lease. */
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

export const webhookSenderLayer = (options: WebhookSenderOptions = {}): Layer.Layer<
  WebhookSender,
  never,
  OrderStore | AppConfig | WebhookTransport
> => Layer.effect(WebhookSender, makeWebhookSender(options))

export const WebhookSenderLive = webhookSenderLayer()

/**
 * The background worker: `lanes` loops, each claiming its own events (`docs/concurrency.md`, "The
 * order-event outbox"). The first lane, woken by `OutboxSignal`, waits `gather` more so that the events
 * of the completions meanwhile share its round (each round costs a claim and a record statement); the
 * others go again at once only after a full round (a backlog), else poll once an `interval`, spread
 * evenly over it. A failed round is logged and its lane goes on.
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
