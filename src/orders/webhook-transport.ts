/**
 * How the order-event sender reaches a receiver: one POST, answered by a status or not at all. The
 * sender decides what an answer means; tests script answers or hand the request to the application.
 */
import { Context, Data, type Duration, type Effect } from "effect"

export interface WebhookPost {
  readonly url: string
  /** Header names in lower case; the transport adds `Content-Length`. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface WebhookAnswer {
  readonly status: number
  readonly retryAfter: string | undefined
}

/** No answer: the connection failed, broke off, or the deadline passed first. */
export class WebhookTransportError extends Data.TaggedError("WebhookTransportError")<{
  /** For the delivery record and the log: no request content. */
  readonly reason: string
}> {}

export interface WebhookTransportShape {
  /** POSTs `request`; the answer's body is read and discarded, so the connection can be reused. */
  readonly post: (
    request: WebhookPost,
    deadline: Duration.Duration
  ) => Effect.Effect<WebhookAnswer, WebhookTransportError>
}

export class WebhookTransport extends Context.Tag("acp/WebhookTransport")<WebhookTransport, WebhookTransportShape>() {}
