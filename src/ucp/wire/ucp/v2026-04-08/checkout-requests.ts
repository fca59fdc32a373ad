/**
 * The request bodies of UCP 2026-04-08's checkout (`checkout.json` with the fulfillment, discount and
 * buyer-consent extensions), each operation's fields as the release's `ucp_request` annotations make
 * them: create and update take the line items, buyer, context, signals, attribution, payment,
 * fulfillment and discounts; complete takes the payment (required), signals and attribution. Keys
 * the release does not define are left to the extensions that may define them (its schemas are
 * open); what it defines is decoded here and either honoured or refused (`checkout-inputs.ts`).
 */
import { Schema } from "effect"
import { MAX_QUANTITY } from "../../../../catalog/model/line-items.ts"
import { BoundedString, optional } from "../../../../shared/schema-helpers.ts"

const Text = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

const Quantity = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(1, { message: () => "must be an integer of at least 1" }),
  Schema.lessThanOrEqualTo(MAX_QUANTITY, { message: () => `must be at most ${MAX_QUANTITY}` })
)

/** At most this many lines, instruments, methods, destinations and codes: a body is bounded before it is priced. */
export const MAX_LIST = 100

const List = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.Array(item).pipe(Schema.maxItems(MAX_LIST, { message: () => `must contain at most ${MAX_LIST} entries` }))

/** `reverse_domain_name.json`. */
export const ReverseDomainName = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)+$/, { message: () => "must be a reverse-domain name" })
)

const ItemReference = Schema.Struct({ id: BoundedString(256) })

export const CreateLineItem = Schema.Struct({ item: ItemReference, quantity: Quantity })
export const UpdateLineItem = Schema.Struct({
  id: optional(BoundedString(256)),
  item: ItemReference,
  quantity: Quantity,
  parent_id: optional(BoundedString(256))
})

/** `postal_address.json`: every field optional in the release. */
export const PostalAddress = Schema.Struct({
  extended_address: optional(Text(256)),
  street_address: optional(Text(256)),
  address_locality: optional(Text(128)),
  address_region: optional(Text(128)),
  address_country: optional(Text(64)),
  postal_code: optional(Text(32)),
  first_name: optional(Text(128)),
  last_name: optional(Text(128)),
  phone_number: optional(Text(64))
})
export type PostalAddress = typeof PostalAddress.Type

/** `buyer_consent.json#/$defs/consent`. */
export const Consent = Schema.Struct({
  analytics: optional(Schema.Boolean),
  preferences: optional(Schema.Boolean),
  marketing: optional(Schema.Boolean),
  sale_of_data: optional(Schema.Boolean)
})
export type Consent = typeof Consent.Type

/** `buyer.json`, with the buyer-consent extension's `consent`. */
export const Buyer = Schema.Struct({
  first_name: optional(Text(128)),
  last_name: optional(Text(128)),
  email: optional(Text(320)),
  phone_number: optional(Text(64)),
  consent: optional(Consent)
})
export type Buyer = typeof Buyer.Type

/** `context.json`: provisional signals of where and how the buyer shops. */
export const Context = Schema.Struct({
  address_country: optional(Text(64)),
  address_region: optional(Text(128)),
  postal_code: optional(Text(32)),
  intent: optional(Text(1024)),
  language: optional(Text(64)),
  currency: optional(Text(16)),
  eligibility: optional(List(ReverseDomainName))
})
export type Context = typeof Context.Type

/** `signals.json` and `attribution.json`: open maps of strings (signals may hold more than strings). */
export const Signals = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export const Attribution = Schema.Record({ key: Schema.String, value: Text(1024) })

/** `payment_credential.json` (open), of which `token_credential.json` is `{type, token}`. */
export const Credential = Schema.Struct({ type: BoundedString(64), token: optional(BoundedString(512)) })

/** `payment_instrument.json#/$defs/selected_payment_instrument`. */
export const Instrument = Schema.Struct({
  id: BoundedString(256),
  handler_id: BoundedString(256),
  type: BoundedString(64),
  selected: optional(Schema.Boolean),
  billing_address: optional(PostalAddress),
  credential: optional(Credential),
  display: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type Instrument = typeof Instrument.Type

export const Payment = Schema.Struct({ instruments: optional(List(Instrument)) })
export type Payment = typeof Payment.Type

const Destination = Schema.Struct({ ...PostalAddress.fields, id: optional(BoundedString(256)) })
export type Destination = typeof Destination.Type

const MethodType = Schema.Literal("shipping", "pickup")
const LineItemIds = List(BoundedString(256))
const SelectedOption = optional(Schema.NullOr(BoundedString(256)))
const methodFields = {
  destinations: optional(List(Destination)),
  selected_destination_id: optional(Schema.NullOr(BoundedString(256)))
}

/** Create: no ids yet (the business assigns them), the type required. */
const CreateMethod = Schema.Struct({
  type: MethodType,
  line_item_ids: optional(LineItemIds),
  ...methodFields,
  groups: optional(List(Schema.Struct({ selected_option_id: SelectedOption })))
})

/** Update: the method's line items required, a group named by its id. */
const UpdateMethod = Schema.Struct({
  id: optional(BoundedString(256)),
  type: optional(MethodType),
  line_item_ids: LineItemIds,
  ...methodFields,
  groups: optional(List(Schema.Struct({ id: BoundedString(256), selected_option_id: SelectedOption })))
})

export interface MethodRequest {
  readonly type?: "shipping" | "pickup"
  readonly line_item_ids?: ReadonlyArray<string>
  readonly destinations?: ReadonlyArray<Destination>
  readonly selected_destination_id?: string | null
  readonly groups?: ReadonlyArray<{ readonly id?: string; readonly selected_option_id?: string | null }>
}

const Fulfillment = <A, I>(method: Schema.Schema<A, I>) => Schema.Struct({ methods: optional(List(method)) })

export const DiscountCodes = Schema.Struct({
  codes: optional(List(BoundedString(256)))
})

const editable = {
  buyer: optional(Buyer),
  context: optional(Context),
  signals: optional(Signals),
  attribution: optional(Attribution),
  payment: optional(Payment),
  discounts: optional(DiscountCodes)
}

export const CreateCheckoutRequest = Schema.Struct({
  line_items: List(CreateLineItem).pipe(Schema.minItems(1, { message: () => "must contain at least 1 line item" })),
  ...editable,
  fulfillment: optional(Fulfillment(CreateMethod))
}).annotations({ identifier: "UcpCreateCheckoutRequest" })
export type CreateCheckoutRequest = typeof CreateCheckoutRequest.Type

export const UpdateCheckoutRequest = Schema.Struct({
  /** Deprecated by the release: the path names the session; a different id is refused. */
  id: optional(BoundedString(256)),
  line_items: List(UpdateLineItem),
  ...editable,
  fulfillment: optional(Fulfillment(UpdateMethod))
}).annotations({ identifier: "UcpUpdateCheckoutRequest" })
export type UpdateCheckoutRequest = typeof UpdateCheckoutRequest.Type

export const CompleteCheckoutRequest = Schema.Struct({
  payment: Payment,
  signals: optional(Signals),
  attribution: optional(Attribution)
}).annotations({ identifier: "UcpCompleteCheckoutRequest" })
export type CompleteCheckoutRequest = typeof CompleteCheckoutRequest.Type
