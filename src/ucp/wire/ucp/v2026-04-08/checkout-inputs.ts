/**
 * UCP 2026-04-08 checkout requests as the domain's inputs. What the domain cannot honour is refused
 * at its JSONPath (`WireRefusal`), never dropped; what changes nothing the buyer gets (context,
 * signals, attribution, the instruments' display) is kept in the session's details and shown back.
 */
import { Either } from "effect"
import type { Address } from "../../../../catalog/model/fulfillment.ts"
import type { JsonObject, SessionDetails } from "../../../../checkout/session/details.ts"
import type { Buyer as PlainBuyer } from "../../../../checkout/session/schemas.ts"
import type {
  CompleteSessionInput,
  CreateSessionInput,
  UpdateSessionInput
} from "../../../../checkout/session/session.ts"
import { defined } from "../../../../shared/defined-fields.ts"
import { WireRefusal } from "../codec.ts"
import type {
  Buyer,
  CompleteCheckoutRequest,
  CreateCheckoutRequest,
  Destination,
  Instrument,
  MethodRequest,
  PostalAddress,
  UpdateCheckoutRequest
} from "./checkout-requests.ts"
import { type ActiveExtensions } from "./extensions.ts"

const refuse = (param: string, message: string, code: WireRefusal["code"] = "unsupported") =>
  Either.left(new WireRefusal({ code, message, param }))

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** The plain buyer once it has names and an email (what readiness needs); the whole buyer in the details. */
const buyerChange = (
  buyer: Buyer | undefined,
  active: ActiveExtensions
): Either.Either<{ readonly buyer?: PlainBuyer; readonly details?: SessionDetails }, WireRefusal> => {
  if (buyer === undefined) return Either.right({})
  if (buyer.consent !== undefined && !active.buyerConsent) {
    return refuse("$.buyer.consent", "The buyer-consent extension (dev.ucp.shopping.buyer_consent) was not negotiated.")
  }
  if (buyer.email !== undefined && !EMAIL.test(buyer.email)) {
    return refuse("$.buyer.email", "$.buyer.email must be an email address.", "invalid")
  }
  const { email, first_name, last_name, phone_number } = buyer
  const plain: PlainBuyer | undefined =
    first_name !== undefined && first_name !== "" && last_name !== undefined && last_name !== "" &&
      email !== undefined
      ? { first_name, last_name, email, ...(phone_number === undefined ? {} : { phone_number }) }
      : undefined
  return Either.right({ ...(plain === undefined ? {} : { buyer: plain }), details: { buyer: buyer as JsonObject } })
}

const COUNTRY = /^[A-Za-z]{2}$/

/** A shipping destination as the domain's address: every part the address needs, or the first one missing. */
export const destinationAddress = (
  destination: PostalAddress,
  at: string
): Either.Either<Address, WireRefusal> => {
  const name = [destination.first_name, destination.last_name].filter((part) => part !== undefined && part !== "")
    .join(" ")
  const required: ReadonlyArray<readonly [string, string | undefined]> = [
    ["street_address", destination.street_address],
    ["address_locality", destination.address_locality],
    ["address_region", destination.address_region],
    ["address_country", destination.address_country],
    ["postal_code", destination.postal_code]
  ]
  for (const [field, value] of required) {
    if (value === undefined || value.trim() === "") {
      return refuse(`${at}.${field}`, `${at}.${field} is required to ship there.`, "missing")
    }
  }
  if (name === "") return refuse(`${at}.first_name`, `${at}.first_name or last_name names the recipient.`, "missing")
  if (!COUNTRY.test(destination.address_country!)) {
    return refuse(`${at}.address_country`, `${at}.address_country must be an ISO 3166-1 alpha-2 code.`, "invalid")
  }
  return Either.right({
    name,
    line_one: destination.street_address!,
    ...(destination.extended_address === undefined || destination.extended_address === ""
      ? {}
      : { line_two: destination.extended_address }),
    city: destination.address_locality!,
    state: destination.address_region!,
    country: destination.address_country!.toUpperCase(),
    postal_code: destination.postal_code!
  })
}

interface FulfillmentChange {
  readonly fulfillment_address?: Address
  readonly fulfillment_option_id?: string
}

/** The destination a method ships to: the one selected, else its only one. */
const chosenDestination = (method: MethodRequest, at: string): Either.Either<
  { readonly destination: Destination; readonly index: number } | undefined,
  WireRefusal
> => {
  const destinations = method.destinations ?? []
  const selected = method.selected_destination_id
  if (selected !== undefined && selected !== null) {
    const index = destinations.findIndex((destination) => destination.id === selected)
    if (index < 0) {
      // The destination the session shows is `dest_1`: selecting it again keeps the stored address.
      return selected === DESTINATION_ID && destinations.length === 0 ? Either.right(undefined) : refuse(
        `${at}.selected_destination_id`,
        `${at}.selected_destination_id must name one of the method's destinations.`,
        "invalid"
      )
    }
    return Either.right({ destination: destinations[index]!, index })
  }
  if (destinations.length > 1) {
    return refuse(`${at}.selected_destination_id`, "Several destinations were given: select one.", "missing")
  }
  return Either.right(destinations.length === 1 ? { destination: destinations[0]!, index: 0 } : undefined)
}

/** The id the session gives its one shipping destination, method and group. */
export const DESTINATION_ID = "dest_1"
export const METHOD_ID = "shipping"
export const GROUP_ID = "group_1"

/** One shipping method for every line: the domain ships a session to one address with one option. */
const fulfillmentChange = (
  fulfillment: { readonly methods?: ReadonlyArray<MethodRequest> } | undefined,
  active: ActiveExtensions,
  canSelect: boolean
): Either.Either<FulfillmentChange, WireRefusal> => {
  if (fulfillment === undefined) return Either.right({})
  if (!active.fulfillment) {
    return refuse("$.fulfillment", "The fulfillment extension (dev.ucp.shopping.fulfillment) was not negotiated.")
  }
  const methods = fulfillment.methods ?? []
  if (methods.length > 1) return refuse("$.fulfillment.methods[1]", "This merchant ships every line with one method.")
  const method = methods[0]
  if (method === undefined) return Either.right({})
  const at = "$.fulfillment.methods[0]"
  if (method.type === "pickup") return refuse(`${at}.type`, "This merchant has no pickup locations: use shipping.")
  return Either.flatMap(chosenDestination(method, at), (chosen) => {
    const groups = method.groups ?? []
    if (groups.length > 1) return refuse(`${at}.groups[1]`, "This merchant ships every line in one group.")
    const group = groups[0]
    const option = group?.selected_option_id ?? undefined
    if (group?.id !== undefined && group.id !== GROUP_ID) {
      return refuse(`${at}.groups[0].id`, `${at}.groups[0].id must be the session's group, ${GROUP_ID}.`, "invalid")
    }
    if (option !== undefined && !canSelect) {
      return refuse(
        `${at}.groups[0].selected_option_id`,
        "Options are offered once the session has an address: select one with an update."
      )
    }
    const address = chosen === undefined
      ? Either.right(undefined)
      : destinationAddress(chosen.destination, `${at}.destinations[${chosen.index}]`)
    return Either.map(address, (fulfillment_address) => defined({ fulfillment_address, fulfillment_option_id: option }))
  })
}

/** Instruments are kept for display without their credential, which only complete takes. */
const instrumentsChange = (
  payment: { readonly instruments?: ReadonlyArray<Instrument> } | undefined
): Either.Either<SessionDetails, WireRefusal> => {
  const instruments = payment?.instruments
  if (instruments === undefined) return Either.right({})
  const withCredential = instruments.findIndex((instrument) => instrument.credential !== undefined)
  if (withCredential >= 0) {
    return refuse(
      `$.payment.instruments[${withCredential}].credential`,
      "A credential is taken by complete only: send the instrument without it until then."
    )
  }
  return Either.right({ payment_instruments: instruments as ReadonlyArray<JsonObject> })
}

const discountsChange = (
  discounts: { readonly codes?: ReadonlyArray<string> } | undefined,
  active: ActiveExtensions
): Either.Either<{ readonly discounts?: { readonly codes: ReadonlyArray<string> } }, WireRefusal> => {
  if (discounts === undefined) return Either.right({})
  if (!active.discount) {
    return refuse("$.discounts", "The discount extension (dev.ucp.shopping.discount) was not negotiated.")
  }
  return Either.right(discounts.codes === undefined ? {} : { discounts: { codes: discounts.codes } })
}

type Editable = Pick<CreateCheckoutRequest, "buyer" | "context" | "signals" | "attribution" | "payment" | "discounts">

/** What create and update share: each part decoded, the first refusal answered. */
const editableChange = (body: Editable, active: ActiveExtensions) =>
  Either.all({
    buyer: buyerChange(body.buyer, active),
    instruments: instrumentsChange(body.payment),
    discounts: discountsChange(body.discounts, active)
  }).pipe(Either.map(({ buyer, discounts, instruments }) => ({
    ...(buyer.buyer === undefined ? {} : { buyer: buyer.buyer }),
    ...discounts,
    details: {
      ...buyer.details,
      ...instruments,
      ...defined({
        context: body.context as JsonObject | undefined,
        risk_signals: body.signals as JsonObject | undefined,
        affiliate_attribution: body.attribution as JsonObject | undefined
      })
    } satisfies SessionDetails
  })))

export const createInput = (
  body: CreateCheckoutRequest,
  active: ActiveExtensions
): Either.Either<CreateSessionInput, WireRefusal> =>
  Either.flatMap(
    editableChange(body, active),
    (editable) =>
      Either.map(fulfillmentChange(body.fulfillment, active, false), (fulfillment) => ({
        items: body.line_items.map((line) => ({ id: line.item.id, quantity: line.quantity })),
        ...editable,
        ...(fulfillment.fulfillment_address === undefined
          ? {}
          : { fulfillment_address: fulfillment.fulfillment_address }),
        protocol: "ucp" as const
      }))
  )

export const updateInput = (
  body: UpdateCheckoutRequest,
  active: ActiveExtensions
): Either.Either<UpdateSessionInput, WireRefusal> => {
  const child = body.line_items.findIndex((line) => line.parent_id !== undefined)
  if (child >= 0) return refuse(`$.line_items[${child}].parent_id`, "This merchant sells no line under another.")
  return Either.flatMap(
    editableChange(body, active),
    (editable) =>
      Either.map(fulfillmentChange(body.fulfillment, active, true), (fulfillment) => ({
        // A PUT replaces the session: the line items are the whole list.
        items: body.line_items.map((line) => ({ id: line.item.id, quantity: line.quantity })),
        ...editable,
        ...fulfillment
      }))
  )
}

/** The instrument to pay with: the one marked selected, else the only one. */
const selectedInstrument = (
  instruments: ReadonlyArray<Instrument>
): Either.Either<{ readonly instrument: Instrument; readonly index: number }, WireRefusal> => {
  const selected = instruments.flatMap((instrument, index) => (instrument.selected === true ? [index] : []))
  if (selected.length > 1) return refuse("$.payment.instruments", "Select one instrument to pay with.", "invalid")
  const index = selected[0] ?? (instruments.length === 1 ? 0 : -1)
  if (index < 0) {
    return refuse(
      "$.payment.instruments",
      instruments.length === 0
        ? "Complete needs a payment instrument."
        : "Mark the instrument to pay with as selected.",
      "missing"
    )
  }
  return Either.right({ instrument: instruments[index]!, index })
}

/** Only token credentials (a `vt_` token of the Delegate Payment API, or a provider's token) are taken. */
export const completeInput = (body: CompleteCheckoutRequest): Either.Either<CompleteSessionInput, WireRefusal> =>
  Either.flatMap(selectedInstrument(body.payment.instruments ?? []), ({ index, instrument }) => {
    const at = `$.payment.instruments[${index}]`
    const credential = instrument.credential
    if (credential === undefined) return refuse(`${at}.credential`, `${at}.credential is required to pay.`, "missing")
    if (credential.type !== "token" || credential.token === undefined) {
      return refuse(
        `${at}.credential.type`,
        `Only token credentials ({"type": "token", "token": …}) are accepted; tokenize the card first.`
      )
    }
    const billing = instrument.billing_address === undefined
      ? Either.right(undefined)
      : destinationAddress(instrument.billing_address, `${at}.billing_address`)
    return Either.map(billing, (billing_address): CompleteSessionInput => ({
      payment_data: {
        handler_id: instrument.handler_id,
        instrument: { type: instrument.type, credential: { type: credential.type, token: credential.token! } },
        ...(billing_address === undefined ? {} : { billing_address })
      },
      details: defined({
        risk_signals: body.signals as JsonObject | undefined,
        affiliate_attribution: body.attribution as JsonObject | undefined
      }),
      canAuthenticate: false
    }))
  })
