/** The checkout session as the domain keeps it, its commands and the reducer's failures (`reducer.ts`). */
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
 * The fields every version shows, in the 2025-09-29 shape each codec renders in its own, and the
 * internal ones. Stores write it only from this type, so they check only its structure reading it.
 */
export const Session = Schema.Struct({
  ...CheckoutSession.fields,
  items: Schema.Array(Item),
  order: optional(OrderSummary),
  details: optional(SessionDetails),
  authentication: optional(AuthenticationRequest)
}).annotations({ identifier: "StoredSession" })
export type Session = typeof Session.Type

type InternalSessionField = Exclude<keyof Session, keyof CheckoutSession>
const internalSessionFields: { readonly [K in InternalSessionField]: true } = {
  items: true,
  order: true,
  details: true,
  authentication: true
}

/** The fields the wire form lacks, which stores keep apart; the compiler keeps the list complete. */
export const INTERNAL_SESSION_FIELDS = Object.keys(internalSessionFields) as ReadonlyArray<InternalSessionField>

/** Everything but the internal fields: the schemas have no transformations, so this is the encoded form. */
export const toCheckoutSession = (session: Session): CheckoutSession => {
  const { authentication: _authentication, details: _details, items: _items, order: _order, ...wire } = session
  const encoded: typeof CheckoutSession.Encoded = wire
  return encoded
}

const renderedWireForms = new WeakMap<Session, string>()

/** Rendered once per session object, for the stored row and the answer; sessions are immutable. */
export const checkoutSessionJson = (session: Session): string => {
  let text = renderedWireForms.get(session)
  if (text === undefined) {
    text = JSON.stringify(toCheckoutSession(session))
    renderedWireForms.set(session, text)
  }
  return text
}

/** The SQL stores keep it in a column apart, so that a read of the wire form takes one column as is. */
export const internalSessionJson = (session: Session): string => {
  const encoded: typeof Session.Encoded = session
  const internal: Partial<Record<InternalSessionField, unknown>> = {}
  for (const field of INTERNAL_SESSION_FIELDS) internal[field] = encoded[field]
  return JSON.stringify(internal)
}

/** What `JSON.parse` gives back whole; the wire form always has an `id`, so it is a non-empty object. */
export const sessionJson = (session: Session): string => {
  const internalJson = internalSessionJson(session)
  const wire = checkoutSessionJson(session)
  return internalJson === "{}" ? wire : `${wire.slice(0, -1)},${internalJson.slice(1)}`
}

/** The wire form's text, shared with the completion's stored row, with the order spliced in. */
export const checkoutSessionWithOrderJson = (session: Session, order: OrderSummary): string =>
  `${checkoutSessionJson(session).slice(0, -1)},"order":${JSON.stringify(order)}}`

export const toCheckoutSessionWithOrder = (
  session: Session & { readonly order: OrderSummary }
): CheckoutSessionWithOrder => {
  const { authentication: _authentication, details: _details, items: _items, ...wire } = session
  const encoded: typeof CheckoutSessionWithOrder.Encoded = wire
  return encoded
}

/** Statuses that can still change, hold stock and expire; stores are given this list, none has its own. */
export const ACTIVE_STATUSES: ReadonlyArray<SessionStatus> = [
  "not_ready_for_payment",
  "ready_for_payment",
  "authentication_required"
]

export const isActive = (status: SessionStatus): boolean => ACTIVE_STATUSES.includes(status)

/** What an agent declares about itself on create. Inputs are in no version's format: codecs build them. */
export interface AgentDeclaration {
  readonly interventions?: { readonly supported?: ReadonlyArray<string> }
  /** Names of the payment handlers the agent can use; absent: any. */
  readonly payment_handler_names?: ReadonlyArray<string>
  /** Names of the extensions the agent speaks; absent: every extension of the merchant. */
  readonly extensions?: ReadonlyArray<string>
}

/**
 * The protocol a session is created and driven in; each answers only its own sessions, told apart by
 * their id's prefix (`sessionProtocol`), so no read is needed to refuse the other's.
 */
export type SessionProtocol = "acp" | "ucp"

export const SESSION_ID_PREFIXES = { acp: "cs_", ucp: "chk_" } as const satisfies Record<SessionProtocol, string>

export const sessionProtocol = (id: string): SessionProtocol => id.startsWith(SESSION_ID_PREFIXES.ucp) ? "ucp" : "acp"

export interface CreateSessionInput {
  /** Absent: ACP. */
  readonly protocol?: SessionProtocol
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
  readonly authentication_result?: AuthenticationResult
  /** Whether the version has the authentication flow; without it a card that needs one is declined. */
  readonly canAuthenticate?: boolean
}

export interface CancelSessionInput {
  readonly details?: SessionDetails
}

/** Stock reserved by a session: product id → quantity. */
export type Reservations = ReadonlyMap<string, number>

/** Everything the reducer knows besides the session, read before the call. */
export interface ReducerContext {
  readonly catalog: CatalogSnapshot
  /** Epoch ms, of the Effect Clock. */
  readonly now: number
  readonly sessionTtlSeconds: number
  /** Units available to this session per product (absent: none); `"unchecked"`: the store checks on write. */
  readonly available: ReadonlyMap<string, number> | "unchecked"
  /** As `DiscountInput.redemptions`. */
  readonly redemptions?: ReadonlyMap<string, number> | undefined
  /** When prices are taken, if not `now`: a resumed payment is priced as when it began. */
  readonly pricedAt?: number | undefined
}

export const pricingTime = (ctx: ReducerContext): number => ctx.pricedAt ?? ctx.now

export type SessionCommand = Data.TaggedEnum<{
  Create: { readonly id: string; readonly request: CreateSessionInput }
  Update: { readonly request: UpdateSessionInput }
  PrepareCompletion: {
    readonly buyer: Buyer | undefined
    readonly details?: SessionDetails | undefined
    readonly fulfillment_address?: Address | undefined
    /** As in `CompleteSessionInput`; `authenticating`: the request presents a result. */
    readonly canAuthenticate?: boolean | undefined
    readonly authenticating?: boolean | undefined
  }
  RequireAuthentication: { readonly request: AuthenticationRequest }
  MarkCompleted: { readonly order: OrderSummary }
  /** The session stays payable and carries the message. */
  RecordPaymentFailure: { readonly message: MessageError }
  Cancel: { readonly details?: SessionDetails | undefined }
  Expire: {}
}>
export const SessionCommand = Data.taggedEnum<SessionCommand>()

export interface Transition {
  readonly session: Session
  /** Held after the command: none once final. */
  readonly reservations: Reservations
}

// Failures of the reducer: each maps to one API error (`toApiError`, `../http/error-answers.ts`).

export class UnknownProduct extends Data.TaggedError("UnknownProduct")<{
  readonly index: number
  readonly productId: string
}> {}

export class OutOfStock extends Data.TaggedError("OutOfStock")<{
  readonly index: number
  readonly productId: string
  readonly requested: number
  readonly available: number
}> {}

export class UnknownFulfillmentOption extends Data.TaggedError("UnknownFulfillmentOption")<{
  readonly optionId: string
}> {}

export class SessionNotModifiable extends Data.TaggedError("SessionNotModifiable")<{
  readonly status: SessionStatus
}> {}

export class SessionNotReady extends Data.TaggedError("SessionNotReady")<{
  readonly messages: ReadonlyArray<MessageError>
}> {}

export class SessionFinal extends Data.TaggedError("SessionFinal")<{
  readonly status: "completed" | "canceled" | "expired"
  readonly command: "complete" | "cancel"
}> {}

/** `session` is re-priced without the discount; the service stores it, so the agent sees the new total. */
export class DiscountUnavailable extends Data.TaggedError("DiscountUnavailable")<{
  readonly rejected: RejectedDiscount & { readonly index: number }
  readonly session: Session
}> {}

/** A price changed since the session was priced: `session` is re-priced; the agent reviews it and completes again. */
export class PriceChanged extends Data.TaggedError("PriceChanged")<{
  readonly index: number
  readonly productId: string
  /** The session's total as shown, and re-priced. */
  readonly was: number
  readonly now: number
  readonly session: Session
}> {}

export class UnsupportedCurrency extends Data.TaggedError("UnsupportedCurrency")<{
  readonly currency: string
  readonly expected: string
}> {}

export class NoCommonPaymentHandler extends Data.TaggedError("NoCommonPaymentHandler")<{
  readonly offered: ReadonlyArray<string>
}> {}

export class FulfillmentSelectionMismatch extends Data.TaggedError("FulfillmentSelectionMismatch")<{
  readonly field: "type" | "item_ids"
  readonly message: string
}> {}

export class AuthenticationResultRequired extends Data.TaggedError("AuthenticationResultRequired")<{}> {}

/** Complete with an address other than the session's: the agent updates first. */
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
  | PriceChanged
