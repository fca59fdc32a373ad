/**
 * The checkout session as the domain keeps it, the commands of its state machine and the typed
 * failures the reducer can return. The reducer itself is in `session-reducer.ts`; what a session
 * shows at a time in `session-view.ts`; its contents and prices in `session-draft.ts`.
 */
import { Data, Schema } from "effect"
import type { CatalogSnapshot } from "../catalog/catalog.ts"
import { optional } from "../shared/schema-helpers.ts"
import {
  type AgentCapabilities,
  type Buyer,
  CheckoutSession,
  type CheckoutSessionCreateRequest,
  type CheckoutSessionUpdateRequest,
  type CheckoutSessionWithOrder,
  Item,
  type MessageError,
  OrderSummary,
  type SessionStatus
} from "./checkout-schemas.ts"
import type { RejectedDiscount } from "./discounts.ts"

/**
 * The stored session: everything the API returns plus the requested items (the source of the
 * line items) and, once completed, the order. Persisted as JSON by the stores, which write it
 * only from this type (and so check only its structure when reading it back).
 */
export const Session = Schema.Struct({
  ...CheckoutSession.fields,
  items: Schema.Array(Item),
  order: optional(OrderSummary)
}).annotations({ identifier: "StoredSession" })
export type Session = typeof Session.Type

/** The fields of a stored session that its wire form (`CheckoutSession`) does not have. */
type InternalSessionField = Exclude<keyof Session, keyof CheckoutSession>
const internalSessionFields: { readonly [K in InternalSessionField]: true } = { items: true, order: true }

/**
 * The names of those fields, for stores that project the wire form themselves
 * (`SessionStore.getJson`); the compiler keeps the list complete.
 */
export const INTERNAL_SESSION_FIELDS = Object.keys(internalSessionFields) as ReadonlyArray<InternalSessionField>

/**
 * The wire form of a stored session: everything but the requested `items` and the `order`.
 * The session schemas have no transformations (their encoded form is their type, checked here by
 * the compiler), so this is the encoded response as is.
 */
export const toCheckoutSession = (session: Session): CheckoutSession => {
  const { items: _items, order: _order, ...wire } = session
  const encoded: typeof CheckoutSession.Encoded = wire
  return encoded
}

/** The wire form of a completed session: the session and its order. */
export const toCheckoutSessionWithOrder = (
  session: Session & { readonly order: OrderSummary }
): CheckoutSessionWithOrder => {
  const { items: _items, ...wire } = session
  const encoded: typeof CheckoutSessionWithOrder.Encoded = wire
  return encoded
}

/**
 * The statuses of a session that can still change, hold stock and expire. Stores are given this
 * list (the SQL sweep as a parameter); none writes its own.
 */
export const ACTIVE_STATUSES: ReadonlyArray<SessionStatus> = [
  "not_ready_for_payment",
  "ready_for_payment",
  "authentication_required"
]

export const isActive = (status: SessionStatus): boolean => ACTIVE_STATUSES.includes(status)

/** Stock reserved by a session: product id → quantity. */
export type Reservations = ReadonlyMap<string, number>

/** What the reducer knows of the world besides the session: all of it read before the call. */
export interface ReducerContext {
  readonly catalog: CatalogSnapshot
  /** Epoch milliseconds of the Effect Clock. */
  readonly now: number
  readonly sessionTtlSeconds: number
  /**
   * Units of each product this session may hold: on hand minus what other live sessions reserve
   * (includes what this session already holds). Products absent from the map have none available.
   * `"unchecked"`: the stock is not read here; the store checks that the reservations fit when it
   * writes them (`createSessionReservingStock`), and the reducer checks only the product ids.
   */
  readonly available: ReadonlyMap<string, number> | "unchecked"
  /**
   * Redemptions counted against each coupon's `max_redemptions`: the stored count plus live holds
   * of other sessions (see `discounts.ts`). Absent coupons count their catalog `times_redeemed`.
   */
  readonly redemptions?: ReadonlyMap<string, number> | undefined
}

export type SessionCommand = Data.TaggedEnum<{
  /** New session with the id the caller minted. */
  Create: { readonly id: string; readonly request: CheckoutSessionCreateRequest }
  Update: { readonly request: CheckoutSessionUpdateRequest }
  /** First step of completing: apply the buyer, check the session is payable. */
  PrepareCompletion: { readonly buyer: Buyer | undefined }
  /** The payment succeeded: the session becomes completed with this order. */
  MarkCompleted: { readonly order: OrderSummary }
  /** The payment was declined: the session stays payable and carries this message. */
  RecordPaymentFailure: { readonly message: MessageError }
  Cancel: {}
  Expire: {}
}>
export const SessionCommand = Data.taggedEnum<SessionCommand>()

export interface Transition {
  readonly session: Session
  /** The reservations the session holds after the command (empty once completed, canceled or expired). */
  readonly reservations: Reservations
}

// ---------------------------------------------------------------------------------------------
// Failures of the reducer. Each maps to one HTTP status and error code (`toApiError`, `./checkout-handlers.ts`).

/** `$.items[index].id` names no product of the catalog → 400 invalid. */
export class UnknownProduct extends Data.TaggedError("UnknownProduct")<{
  readonly index: number
  readonly productId: string
}> {}

/** More units than available → 422 out_of_stock, param `$.items[index]`. */
export class OutOfStock extends Data.TaggedError("OutOfStock")<{
  readonly index: number
  readonly productId: string
  readonly requested: number
  readonly available: number
}> {}

/** `fulfillment_option_id` is not one of the offered options → 400 invalid. */
export class UnknownFulfillmentOption extends Data.TaggedError("UnknownFulfillmentOption")<{
  readonly optionId: string
}> {}

/** Update of a completed, canceled or expired session → 422 session_not_modifiable. */
export class SessionNotModifiable extends Data.TaggedError("SessionNotModifiable")<{
  readonly status: SessionStatus
}> {}

/** Complete on a session that is not ready → 422 session_not_ready; the gaps are in `messages`. */
export class SessionNotReady extends Data.TaggedError("SessionNotReady")<{
  readonly messages: ReadonlyArray<MessageError>
}> {}

/** Complete on a final session → 409; cancel on a final session → 405. */
export class SessionFinal extends Data.TaggedError("SessionFinal")<{
  readonly status: "completed" | "canceled" | "expired"
  readonly command: "complete" | "cancel"
}> {}

/**
 * Complete: a discount applied on the session can no longer be applied (expired, usage limit
 * reached…) → 422 with the rejection's reason as code. `session` is the session re-priced without
 * it (the service stores it, so the agent sees the new total before paying).
 */
export class DiscountUnavailable extends Data.TaggedError("DiscountUnavailable")<{
  readonly rejected: RejectedDiscount & { readonly index: number }
  readonly session: Session
}> {}

export type ReducerError =
  | UnknownProduct
  | OutOfStock
  | UnknownFulfillmentOption
  | SessionNotModifiable
  | SessionNotReady
  | SessionFinal
  | DiscountUnavailable

export type { AgentCapabilities }
