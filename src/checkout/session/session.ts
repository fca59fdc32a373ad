/**
 * The checkout session as the domain keeps it, the commands of its state machine and the typed
 * failures the reducer can return. The reducer itself is in `reducer.ts`; what a session
 * shows at a time in `view.ts`; its contents and prices in `draft.ts`.
 */
import { Data, Schema } from "effect"
import type { CatalogSnapshot } from "../../catalog/model/catalog.ts"
import { type Address } from "../../catalog/model/fulfillment.ts"
import { Item } from "../../catalog/model/line-items.ts"
import { OrderSummary } from "../../orders/model/order.ts"
import { AuthenticationRequest, type AuthenticationResult } from "../../payments/model/issuer-authentication.ts"
import { optional } from "../../shared/schema-helpers.ts"
import type { RejectedDiscount } from "../pricing/discounts.ts"
import { SessionDetails } from "./details.ts"
import {
  type Buyer,
  CheckoutSession,
  type CheckoutSessionWithOrder,
  type MessageError,
  type PaymentData,
  type SessionStatus
} from "./schemas.ts"

/**
 * The stored session: the fields every version shows (in the 2025-09-29 shape, the interface
 * document's, which each codec renders in its own), the requested items (the source of the line
 * items), once completed the order, and the details only some versions carry
 * (`details.ts`), and while it is `authentication_required` what the agent authenticates
 * with (`payments/model/issuer-authentication.ts`). Persisted as JSON by the stores, which write it only from this type (and
 * so check only its structure when reading it back).
 */
export const Session = Schema.Struct({
  ...CheckoutSession.fields,
  items: Schema.Array(Item),
  order: optional(OrderSummary),
  details: optional(SessionDetails),
  authentication: optional(AuthenticationRequest)
}).annotations({ identifier: "StoredSession" })
export type Session = typeof Session.Type

/** The fields of a stored session that its wire form (`CheckoutSession`) does not have. */
type InternalSessionField = Exclude<keyof Session, keyof CheckoutSession>
const internalSessionFields: { readonly [K in InternalSessionField]: true } = {
  items: true,
  order: true,
  details: true,
  authentication: true
}

/**
 * The names of those fields, which stores keep apart from the wire form (`internalSessionJson`);
 * the compiler keeps the list complete.
 */
export const INTERNAL_SESSION_FIELDS = Object.keys(internalSessionFields) as ReadonlyArray<InternalSessionField>

/**
 * The wire form of a stored session: everything but the requested `items` and the `order`.
 * The session schemas have no transformations (their encoded form is their type, checked here by
 * the compiler), so this is the encoded response as is.
 */
export const toCheckoutSession = (session: Session): CheckoutSession => {
  const { authentication: _authentication, details: _details, items: _items, order: _order, ...wire } = session
  const encoded: typeof CheckoutSession.Encoded = wire
  return encoded
}

const renderedWireForms = new WeakMap<Session, string>()

/**
 * `toCheckoutSession` as JSON text, rendered once per session object: a session that is both
 * stored (`sessionJson` of the SQL stores) and answered in a version whose response is the wire
 * form is serialized once. Sessions are immutable values, so the text stays true.
 */
export const checkoutSessionJson = (session: Session): string => {
  let text = renderedWireForms.get(session)
  if (text === undefined) {
    text = JSON.stringify(toCheckoutSession(session))
    renderedWireForms.set(session, text)
  }
  return text
}

/**
 * The internal fields of a session (those its wire form lacks) as a JSON object's text: with the
 * wire form's text (`checkoutSessionJson`) what a store keeps of a session, the SQL stores in
 * columns of their own so that a read of the wire form takes one column as it is.
 */
export const internalSessionJson = (session: Session): string => {
  const encoded: typeof Session.Encoded = session
  const internal: Partial<Record<InternalSessionField, unknown>> = {}
  for (const field of INTERNAL_SESSION_FIELDS) internal[field] = encoded[field]
  return JSON.stringify(internal)
}

/**
 * A session as stores keep it, in JSON text: the session as typed (the schema has no
 * transformations, checked here), which `JSON.parse` gives back whole. It is the wire form's text
 * (`checkoutSessionJson`, which the response may share) with the internal fields added: the wire
 * form always has an `id`, so it is a non-empty object.
 */
export const sessionJson = (session: Session): string => {
  const internalJson = internalSessionJson(session)
  const wire = checkoutSessionJson(session)
  return internalJson === "{}" ? wire : `${wire.slice(0, -1)},${internalJson.slice(1)}`
}

/**
 * `toCheckoutSessionWithOrder` as JSON text: the wire form's text (`checkoutSessionJson`, which the
 * completion's stored row shares) with the order added; the wire form always has an `id`, so it is
 * a non-empty object.
 */
export const checkoutSessionWithOrderJson = (session: Session, order: OrderSummary): string =>
  `${checkoutSessionJson(session).slice(0, -1)},"order":${JSON.stringify(order)}}`

/** The wire form of a completed session: the session and its order. */
export const toCheckoutSessionWithOrder = (
  session: Session & { readonly order: OrderSummary }
): CheckoutSessionWithOrder => {
  const { authentication: _authentication, details: _details, items: _items, ...wire } = session
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

// ---------------------------------------------------------------------------------------------
// Requests in no version's format: each version's codec builds them from its own wire format.

/** What an agent declares about itself on create; unknown values are ignored. */
export interface AgentDeclaration {
  readonly interventions?: { readonly supported?: ReadonlyArray<string> }
  /** Names of the payment handlers the agent can use; absent: any. */
  readonly payment_handler_names?: ReadonlyArray<string>
  /** Names of the extensions the agent speaks; absent: every extension of the merchant. */
  readonly extensions?: ReadonlyArray<string>
}

export interface CreateSessionInput {
  readonly items: ReadonlyArray<Item>
  readonly buyer?: Buyer
  readonly fulfillment_address?: Address
  readonly capabilities?: AgentDeclaration
  readonly discounts?: { readonly codes: ReadonlyArray<string> }
  /** The currency the agent expects to pay in; must be the merchant's. */
  readonly currency?: string
  readonly details?: SessionDetails
}

export interface UpdateSessionInput {
  /** Replaces the whole list; `[]` empties the cart (the session is then not ready for payment). */
  readonly items?: ReadonlyArray<Item>
  readonly buyer?: Buyer
  readonly fulfillment_address?: Address
  readonly fulfillment_option_id?: string
  /** How a selection described the option: its type and the items it is for, checked against the option. */
  readonly fulfillment_selection?: { readonly type: string; readonly item_ids: ReadonlyArray<string> }
  /** Replaces the codes; `[]` clears them; absent keeps them. */
  readonly discounts?: { readonly codes: ReadonlyArray<string> }
  /** Each field given replaces the stored one. */
  readonly details?: SessionDetails
}

export interface CompleteSessionInput {
  readonly buyer?: Buyer
  readonly payment_data: PaymentData
  readonly details?: SessionDetails
  /** The address the agent believes it ships to: it must be the session's (a change is refused, not paid). */
  readonly fulfillment_address?: Address
  /** The issuer authentication the agent presents (versions with 3-D Secure). */
  readonly authentication_result?: AuthenticationResult
  /**
   * Whether the request's version can carry the authentication flow: a card that needs it then
   * puts the session in `authentication_required`; otherwise its payment is declined.
   */
  readonly canAuthenticate?: boolean
}

export interface CancelSessionInput {
  readonly details?: SessionDetails
}

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
  /**
   * When prices are taken (discount eligibility, fulfillment options), when not `now`: a payment
   * under way, resumed by a retry, is priced as when it began, so the retry charges what the first
   * try did (`pricingTime`).
   */
  readonly pricedAt?: number | undefined
}

/** The time a reducer step prices at: `pricedAt` when given, else `now`. */
export const pricingTime = (ctx: ReducerContext): number => ctx.pricedAt ?? ctx.now

export type SessionCommand = Data.TaggedEnum<{
  /** New session with the id the caller minted. */
  Create: { readonly id: string; readonly request: CreateSessionInput }
  Update: { readonly request: UpdateSessionInput }
  /** First step of completing: apply the buyer and details, check the session is payable. */
  PrepareCompletion: {
    readonly buyer: Buyer | undefined
    readonly details?: SessionDetails | undefined
    readonly fulfillment_address?: Address | undefined
    /** Whether the request's version has the authentication flow, and presents a result (see there). */
    readonly canAuthenticate?: boolean | undefined
    readonly authenticating?: boolean | undefined
  }
  /** The card needs issuer authentication: the session waits for the agent's result. */
  RequireAuthentication: { readonly request: AuthenticationRequest }
  /** The payment succeeded: the session becomes completed with this order. */
  MarkCompleted: { readonly order: OrderSummary }
  /** The payment was declined: the session stays payable and carries this message. */
  RecordPaymentFailure: { readonly message: MessageError }
  Cancel: { readonly details?: SessionDetails | undefined }
  Expire: {}
}>
export const SessionCommand = Data.taggedEnum<SessionCommand>()

export interface Transition {
  readonly session: Session
  /** The reservations the session holds after the command (empty once completed, canceled or expired). */
  readonly reservations: Reservations
}

// ---------------------------------------------------------------------------------------------
// Failures of the reducer. Each maps to one HTTP status and error code (`toApiError`, `../http/handlers.ts`).

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

/** Create names a currency that is not the merchant's → 400 invalid at `$.currency`. */
export class UnsupportedCurrency extends Data.TaggedError("UnsupportedCurrency")<{
  readonly currency: string
  readonly expected: string
}> {}

/** The agent declared payment handlers and none is the merchant's → 400 at `$.capabilities.payment.handlers`. */
export class NoCommonPaymentHandler extends Data.TaggedError("NoCommonPaymentHandler")<{
  readonly offered: ReadonlyArray<string>
}> {}

/**
 * A fulfillment selection whose type is not the chosen option's, or that names an item that is
 * not in the session → 400 at the selection.
 */
export class FulfillmentSelectionMismatch extends Data.TaggedError("FulfillmentSelectionMismatch")<{
  readonly field: "type" | "item_ids"
  readonly message: string
}> {}

/** Complete without `authentication_result` on a session in `authentication_required` → 400 requires_3ds. */
export class AuthenticationResultRequired extends Data.TaggedError("AuthenticationResultRequired")<{}> {}

/** Complete with a fulfillment address other than the session's → 409 (the agent updates first). */
export class FulfillmentAddressChanged extends Data.TaggedError("FulfillmentAddressChanged")<{}> {}

export type ReducerError =
  | UnsupportedCurrency
  | NoCommonPaymentHandler
  | FulfillmentSelectionMismatch
  | FulfillmentAddressChanged
  | AuthenticationResultRequired
  | UnknownProduct
  | OutOfStock
  | UnknownFulfillmentOption
  | SessionNotModifiable
  | SessionNotReady
  | SessionFinal
  | DiscountUnavailable
