/**
 * Order events on the wire, one entry per served ACP version (`docs/order-events.md`): the body the
 * sender posts, its strict schema, and the receiver's reading. Keyed by every served version, so a
 * version added to `API_VERSION_NAMES` does not compile until it has its order-event format.
 */
import { Either, type ParseResult, Schema } from "effect"
import type { ApiVersionName } from "../../../shared/api-versions.ts"
import type { OrderEvent } from "../../model/order-event.ts"
import { body20250929, OrderEvent20250929, ReceivedOrderEvent20250929 } from "./v2025-09-29.ts"
import { body20260130, OrderEvent20260130 } from "./v2026-01-30.ts"
import { body20260417, OrderEvent20260417, ReceivedOrderEvent20260417 } from "./v2026-04-17.ts"

export interface ReceivedOrderEvent {
  readonly version: ApiVersionName
  readonly type: string
  /** `data.id`, or `data.checkout_session_id` where the version (2026-01-30) or the sender gives no id. */
  readonly orderId: string
  readonly status: string
}

export interface OrderEventReading {
  readonly schema: Schema.Schema.AnyNoContext
  readonly decode: (json: unknown) => Either.Either<Omit<ReceivedOrderEvent, "version">, ParseResult.ParseError>
}

export interface OrderEventWire {
  /** The event exactly as this service sends it in this version (a subset of the official schema). */
  readonly sent: Schema.Schema.AnyNoContext
  /** The JSON text posted for an outbox event: the same bytes for the same event. */
  readonly body: (event: OrderEvent) => string
  readonly received: OrderEventReading
}

interface ReadableEvent {
  readonly type: string
  readonly data: { readonly id?: string; readonly checkout_session_id: string; readonly status: string }
}

const reading = <A extends ReadableEvent, I>(schema: Schema.Schema<A, I, never>): OrderEventReading => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return {
    schema,
    decode: (json) =>
      Either.map(decode(json), (event) => ({
        type: event.type,
        orderId: event.data.id ?? event.data.checkout_session_id,
        status: event.data.status
      }))
  }
}

const upTo20260130 = reading(ReceivedOrderEvent20250929)
const from20260417 = reading(ReceivedOrderEvent20260417)

export const ORDER_EVENT_WIRES: Readonly<Record<ApiVersionName, OrderEventWire>> = {
  "2025-09-29": { sent: OrderEvent20250929, body: body20250929, received: upTo20260130 },
  "2026-01-30": { sent: OrderEvent20260130, body: body20260130, received: upTo20260130 },
  "2026-04-17": { sent: OrderEvent20260417, body: body20260417, received: from20260417 }
}

/** The schemas the receiver reads bodies with, each once (what its endpoint documents). */
export const RECEIVED_ORDER_EVENT_SCHEMAS = [ReceivedOrderEvent20250929, ReceivedOrderEvent20260417] as const

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A body naming no version: `data.refunds` exists only up to 2026-01-30 (read as 2025-09-29), else 2026-04-17. */
export const recognisedVersion = (json: unknown): ApiVersionName =>
  isObject(json) && isObject(json.data) && "refunds" in json.data ? "2025-09-29" : "2026-04-17"
