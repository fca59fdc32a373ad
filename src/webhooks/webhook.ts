/**
 * Order-event webhooks (interface document "Webhook resources", "Order event webhook"; CONTRACT
 * §3 and §8): the event schemas, `Merchant-Signature` signing and verification, the optional
 * `Signature`/`Timestamp` request signing of the checkout and delegate APIs, the sender's retry
 * policy and the receiver's body validation. Everything here is pure (time and randomness are
 * passed in); HMACs come from node:crypto.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Data, Either, Schema } from "effect"
import { Order } from "../orders/order.ts"
import { firstFailureAtJsonPath } from "../shared/schema-failure.ts"
import { Amount, optional } from "../shared/schema-helpers.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../shared/storable-text.ts"

// ---------------------------------------------------------------------------------------------
// Event schemas

export const WebhookEventType = Schema.Literal("order_create", "order_update")
export type WebhookEventType = typeof WebhookEventType.Type

export const WebhookRefund = Schema.Struct({
  type: Schema.Literal("store_credit", "original_payment"),
  amount: Amount
}).annotations({ identifier: "WebhookRefund" })
export type WebhookRefund = typeof WebhookRefund.Type

const boundedString = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/** Any JSON object: the elements of line_items, fulfillments and adjustments are kept as sent. */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "WebhookJsonObject",
  description: "an object"
})

export const ReceivedTotal = Schema.Struct({
  type: boundedString(64),
  display_text: boundedString(256),
  amount: Schema.Int.annotations({ description: "an integer" })
}).annotations({ identifier: "ReceivedTotal" })
export type ReceivedTotal = typeof ReceivedTotal.Type

/**
 * EventDataOrder as the receiver decodes it. `status` is any string (unknown statuses are
 * accepted and kept); the optional arrays are kept as sent, only their element shape is checked
 * loosely (objects; totals `{type, display_text, amount}`).
 */
export const EventDataOrder = Schema.Struct({
  type: Schema.Literal("order"),
  id: optional(boundedString(256)),
  checkout_session_id: boundedString(256),
  permalink_url: boundedString(2048),
  status: boundedString(64),
  refunds: Schema.Array(WebhookRefund),
  line_items: optional(Schema.Array(JsonObject)),
  fulfillments: optional(Schema.Array(JsonObject)),
  adjustments: optional(Schema.Array(JsonObject)),
  totals: optional(Schema.Array(ReceivedTotal))
}).annotations({ identifier: "EventDataOrder" })
export type EventDataOrder = typeof EventDataOrder.Type

/** The event as received (lenient status). Unknown fields are ignored. */
export const WebhookEvent = Schema.Struct({
  type: WebhookEventType,
  data: EventDataOrder
}).annotations({ identifier: "WebhookEvent" })
export type WebhookEvent = typeof WebhookEvent.Type

/** The event as sent: the full order with the known status enum. */
export const OutgoingWebhookEvent = Schema.Struct({
  type: WebhookEventType,
  data: Order
}).annotations({ identifier: "OutgoingWebhookEvent" })
export type OutgoingWebhookEvent = typeof OutgoingWebhookEvent.Type

export const makeOrderEvent = (type: WebhookEventType, order: Order): OutgoingWebhookEvent => ({ type, data: order })

/** Webhook error object of the interface document. */
export const WebhookErrorObject = Schema.Struct({
  type: Schema.Literal("invalid_request", "processing_error", "service_unavailable"),
  code: Schema.String,
  message: Schema.String,
  param: optional(Schema.String)
}).annotations({ identifier: "WebhookError" })
export type WebhookErrorObject = typeof WebhookErrorObject.Type

/** 200 body of the receiver (CONTRACT §8). */
export const WebhookAck = Schema.Struct({
  received: Schema.Literal(true),
  request_id: Schema.String
}).annotations({ identifier: "WebhookAck" })
export type WebhookAck = typeof WebhookAck.Type

// ---------------------------------------------------------------------------------------------
// Body validation: first problem as {code: missing | invalid, message, param}

/** Decodes a parsed JSON body with `schema`; failure is the 400 error object (`invalid_request`, missing | invalid). */
export const makeWebhookEventDecoder = <I>(schema: Schema.Schema<WebhookEvent, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (input: unknown): Either.Either<WebhookEvent, WebhookErrorObject> =>
    Either.mapLeft(decode(input), (error) => {
      const first = firstFailureAtJsonPath(error)
      return { type: "invalid_request", code: first.kind, message: first.message, param: first.param }
    })
}

export const decodeWebhookEvent = makeWebhookEventDecoder(WebhookEvent)

/**
 * Parses a raw body and decodes it with `schema` (the receiver route's declared payload,
 * `WebhookEvent`); JSON syntax errors → `invalid_json` (param `$`).
 */
export const makeWebhookBodyParser = <I>(schema: Schema.Schema<WebhookEvent, I, never>) => {
  const decodeEvent = makeWebhookEventDecoder(schema)
  return (rawBody: string | Uint8Array): Either.Either<WebhookEvent, WebhookErrorObject> => {
    let json: unknown
    try {
      json = JSON.parse(typeof rawBody === "string" ? rawBody : Buffer.from(rawBody).toString("utf8"))
    } catch {
      return Either.left({ type: "invalid_request", code: "invalid_json", message: "request body is not valid JSON", param: "$" })
    }
    // The whole payload is kept (jsonb), so all of its text must be storable.
    const unstorable = unstorableTextPath(json)
    if (unstorable !== undefined) {
      return Either.left({ type: "invalid_request", code: "invalid", message: `Text ${UNSTORABLE_TEXT_MESSAGE}.`, param: unstorable })
    }
    return decodeEvent(json)
  }
}

export const parseWebhookBody = makeWebhookBodyParser(WebhookEvent)

// ---------------------------------------------------------------------------------------------
// Merchant-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>

export type SignatureFailureReason = "missing" | "malformed" | "stale" | "future" | "mismatch"

/** Any signature problem → 401 `invalid_signature`; `reason` is for logs only. */
export class SignatureFailure extends Data.TaggedError("SignatureFailure")<{
  readonly reason: SignatureFailureReason
}> {
  override get message(): string {
    return `invalid signature (${this.reason})`
  }
}

const toBytes = (body: string | Uint8Array): Buffer =>
  typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength)

const hmac = (secret: string, prefix: string, rawBody: string | Uint8Array): Buffer =>
  createHmac("sha256", secret).update(prefix, "utf8").update(toBytes(rawBody)).digest()

export const MERCHANT_SIGNATURE_HEADER = "Merchant-Signature"

/** `t=<timestampSeconds>,v1=<hex HMAC-SHA256(secret, t + "." + rawBody)>` over the exact body bytes. */
export const signPayload = (secret: string, timestampSeconds: number, rawBody: string | Uint8Array): string => {
  const t = String(Math.trunc(timestampSeconds))
  return `t=${t},v1=${hmac(secret, `${t}.`, rawBody).toString("hex")}`
}

export interface ParsedSignatureHeader {
  readonly timestamp: number
  /** Lowercase hex, 64 characters each (several during secret rotation). */
  readonly signatures: ReadonlyArray<string>
}

/**
 * Parses `t=…,v1=…[,v1=…]`. Spaces around parts, keys and values are ignored, as are empty parts
 * and unknown schemes (e.g. `v0=`). Malformed: a part without `=`, no or several `t`, a `t` that
 * is not decimal seconds, no `v1`, a `v1` that is not 64 hex digits.
 */
export const parseSignatureHeader = (header: string): Either.Either<ParsedSignatureHeader, SignatureFailure> => {
  const malformed = Either.left(new SignatureFailure({ reason: "malformed" }))
  if (header.length > 4096) return malformed
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const rawPart of header.split(",")) {
    const part = rawPart.trim()
    if (part === "") continue
    const eq = part.indexOf("=")
    if (eq <= 0) return malformed
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t") {
      if (timestamp !== undefined || !/^\d{1,15}$/.test(value)) return malformed
      timestamp = Number(value)
    } else if (key === "v1") {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return malformed
      signatures.push(value.toLowerCase())
    }
  }
  if (timestamp === undefined || signatures.length === 0) return malformed
  return Either.right({ timestamp, signatures })
}

const checkWindow = (
  timestampSeconds: number,
  nowSeconds: number,
  toleranceSeconds: number
): SignatureFailure | undefined =>
  nowSeconds - timestampSeconds > toleranceSeconds
    ? new SignatureFailure({ reason: "stale" })
    : timestampSeconds - nowSeconds > toleranceSeconds
    ? new SignatureFailure({ reason: "future" })
    : undefined

/**
 * Compares every candidate with every expected MAC with `timingSafeEqual` (equal-length buffers),
 * without stopping at the first match; returns the index of the first matching secret.
 */
const matchSecrets = (candidates: ReadonlyArray<Buffer>, expected: ReadonlyArray<Buffer>): number => {
  let found = -1
  for (let i = 0; i < expected.length; i++) {
    const mac = expected[i]!
    let hit = false
    for (const candidate of candidates) {
      const same = candidate.length === mac.length && timingSafeEqual(candidate, mac)
      hit = hit || same
    }
    if (hit && found === -1) found = i
  }
  return found
}

export interface VerifySignatureInput {
  readonly header: string | null | undefined
  readonly rawBody: string | Uint8Array
  readonly secrets: ReadonlyArray<string>
  readonly nowSeconds: number
  readonly toleranceSeconds: number
}

/**
 * Verifies a `Merchant-Signature` header against every secret (rotation). Order of checks:
 * missing → malformed → timestamp window (stale | future; exactly ±tolerance is accepted) →
 * HMAC (mismatch).
 */
export const verifySignature = (input: VerifySignatureInput): Either.Either<{ readonly secretIndex: number }, SignatureFailure> => {
  if (input.header === undefined || input.header === null || input.header.trim() === "") {
    return Either.left(new SignatureFailure({ reason: "missing" }))
  }
  const parsed = parseSignatureHeader(input.header)
  if (Either.isLeft(parsed)) return Either.left(parsed.left)
  const { signatures, timestamp } = parsed.right
  const outside = checkWindow(timestamp, input.nowSeconds, input.toleranceSeconds)
  if (outside) return Either.left(outside)
  const prefix = `${timestamp}.`
  const expected = input.secrets.map((secret) => hmac(secret, prefix, input.rawBody))
  const index = matchSecrets(
    signatures.map((hex) => Buffer.from(hex, "hex")),
    expected
  )
  return index >= 0 ? Either.right({ secretIndex: index }) : Either.left(new SignatureFailure({ reason: "mismatch" }))
}

// ---------------------------------------------------------------------------------------------
// Checkout / delegate request signing (CONTRACT §3): Signature = base64url HMAC-SHA256(secret,
// timestamp + "." + raw body), Timestamp = Unix seconds or RFC 3339, within ±300 s.

/** base64url (no padding) HMAC-SHA256 over `timestamp + "." + rawBody`, timestamp exactly as sent. */
export const signRequest = (secret: string, timestamp: string, rawBody: string | Uint8Array): string =>
  hmac(secret, `${timestamp}.`, rawBody).toString("base64url")

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/

/** `Timestamp` header → Unix seconds: decimal seconds or an RFC 3339 date-time; else undefined. */
export const parseRequestTimestamp = (value: string): number | undefined => {
  const v = value.trim()
  if (/^\d{1,15}$/.test(v)) return Number(v)
  if (!RFC3339.test(v)) return undefined
  const ms = Date.parse(v.replace(" ", "T"))
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined
}

export interface VerifyRequestSignatureInput {
  readonly signature: string | null | undefined
  readonly timestamp: string | null | undefined
  readonly rawBody: string | Uint8Array
  readonly secrets: ReadonlyArray<string>
  readonly nowSeconds: number
  /** 300 unless told. */
  readonly toleranceSeconds?: number
}

/**
 * Verifies `Signature`/`Timestamp`. The signature may be base64url (as we sign) or standard base64,
 * padded or not; it must decode to 32 bytes. Failures: missing (either header absent) | malformed
 * | stale | future | mismatch.
 */
export const verifyRequestSignature = (
  input: VerifyRequestSignatureInput
): Either.Either<{ readonly secretIndex: number }, SignatureFailure> => {
  const signature = input.signature?.trim() ?? ""
  const timestamp = input.timestamp?.trim() ?? ""
  if (signature === "" || timestamp === "") return Either.left(new SignatureFailure({ reason: "missing" }))
  const seconds = parseRequestTimestamp(timestamp)
  if (seconds === undefined || !/^[A-Za-z0-9_\-+/]{42,44}={0,2}$/.test(signature)) {
    return Either.left(new SignatureFailure({ reason: "malformed" }))
  }
  const candidate = Buffer.from(signature.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""), "base64url")
  if (candidate.length !== 32) return Either.left(new SignatureFailure({ reason: "malformed" }))
  const outside = checkWindow(seconds, input.nowSeconds, input.toleranceSeconds ?? 300)
  if (outside) return Either.left(outside)
  const prefix = `${timestamp}.`
  const index = matchSecrets(
    [candidate],
    input.secrets.map((secret) => hmac(secret, prefix, input.rawBody))
  )
  return index >= 0 ? Either.right({ secretIndex: index }) : Either.left(new SignatureFailure({ reason: "mismatch" }))
}

// ---------------------------------------------------------------------------------------------
// Sender retry policy

export const BACKOFF_BASE_MS = 1_000
export const BACKOFF_FACTOR = 2
export const BACKOFF_CAP_MS = 60 * 60 * 1_000

/**
 * Full-jitter exponential backoff: `floor(random × min(cap, base × 2^(attempt − 1)))`.
 * `attempt` is the number of attempts made so far (1 after the first failure); `random` ∈ [0, 1).
 */
export const backoffDelayMs = (attempt: number, random: number): number => {
  const exponent = Math.max(0, Math.floor(attempt) - 1)
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * Math.pow(BACKOFF_FACTOR, Math.min(exponent, 64)))
  const r = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1 - Number.EPSILON) : 0
  return Math.floor(r * ceiling)
}

/**
 * `Retry-After` → milliseconds from `nowMs`: delta seconds or an HTTP date; a past date gives 0;
 * capped at BACKOFF_CAP_MS; unparseable → undefined.
 */
export const parseRetryAfter = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const value = header.trim()
  if (value === "") return undefined
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1_000, BACKOFF_CAP_MS)
  if (!/[A-Za-z]/.test(value)) return undefined
  const date = Date.parse(value)
  if (!Number.isFinite(date)) return undefined
  return Math.min(Math.max(0, date - nowMs), BACKOFF_CAP_MS)
}

export type DeliveryResponse = { readonly status: number } | { readonly networkError: true }

export type DeliveryOutcome = "delivered" | "retry" | "dead_letter"

export interface RetryDecision {
  readonly retry: boolean
  readonly delayMs: number
  readonly outcome: DeliveryOutcome
}

export interface RetryContext {
  /** Uniform in [0, 1): the jitter. */
  readonly random: number
  /** Epoch ms, to resolve a Retry-After HTTP date. */
  readonly nowMs: number
}

export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || (status >= 500 && status <= 599)

/**
 * What to do after attempt number `attempt` (1-based) got `response`. 2xx → delivered; network
 * error, 408, 429, 5xx → retry after `Retry-After` when given and valid (any retryable status),
 * else full-jitter backoff; any other status (other 4xx, 1xx, 3xx) → dead-letter at once. The
 * caller dead-letters instead of retrying when `isPastHorizon` holds for the next attempt time.
 */
export const retryDecision = (
  response: DeliveryResponse,
  attempt: number,
  retryAfterHeader: string | undefined,
  context: RetryContext
): RetryDecision => {
  if ("status" in response) {
    if (response.status >= 200 && response.status <= 299) return { retry: false, delayMs: 0, outcome: "delivered" }
    if (!isRetryableStatus(response.status)) return { retry: false, delayMs: 0, outcome: "dead_letter" }
    const retryAfter = parseRetryAfter(retryAfterHeader, context.nowMs)
    if (retryAfter !== undefined) return { retry: true, delayMs: retryAfter, outcome: "retry" }
  }
  return { retry: true, delayMs: backoffDelayMs(attempt, context.random), outcome: "retry" }
}

const ms = (t: number | Date): number => (typeof t === "number" ? t : t.getTime())

/** True once more than `horizonMs` has passed since the first attempt (then: dead-letter). */
export const isPastHorizon = (firstAttemptAt: number | Date, now: number | Date, horizonMs: number): boolean =>
  ms(now) - ms(firstAttemptAt) > horizonMs
