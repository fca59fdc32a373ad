/**
 * The checkout session state machine (CONTRACT §5) as one pure function:
 * `reduce(session, command, context) → Either<Transition, ReducerError>`.
 *
 * Pure: no I/O, no clock, no randomness. Time comes only from `ctx.now`; line item ids are a
 * hash of (session id, product id, occurrence), so the same input always gives the same output.
 */
import { createHash } from "node:crypto"
import { Either } from "effect"
import type { CatalogSnapshot, Product } from "../catalog/catalog.ts"
import type {
  Address,
  AgentCapabilities,
  Buyer,
  Capabilities,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  FulfillmentOption,
  Item,
  LineItem,
  Message,
  MessageError,
  MessageInfo,
  OrderSummary,
  SessionStatus,
  Total
} from "./checkout-schemas.ts"
import {
  DISCOUNT_EXTENSION,
  type Discounts,
  evaluateDiscounts,
  ineligibility,
  type RejectedDiscount
} from "./discounts.ts"
import { multiplyAmount } from "../shared/money.ts"
import { cheapestOption, computeTotals, fulfillmentOptions, priceLineItems, resolveTaxRule } from "./pricing.ts"
import {
  DiscountUnavailable,
  isActive,
  OutOfStock,
  type ReducerContext,
  type ReducerError,
  type Reservations,
  type Session,
  type SessionCommand,
  SessionFinal,
  SessionNotModifiable,
  SessionNotReady,
  type Transition,
  UnknownFulfillmentOption,
  UnknownProduct
} from "./session-model.ts"

type FinalStatus = "completed" | "canceled" | "expired"

const isFinal = (status: SessionStatus): status is FinalStatus => !isActive(status)

const iso = (epochMs: number): string => new Date(epochMs).toISOString()

// ---------------------------------------------------------------------------------------------
// Views

/** Whether `session` is active but its idle deadline has passed at `now` (`now >= expires_at`). */
export const isExpiredAt = (session: Pick<Session, "status" | "expires_at">, now: number): boolean =>
  isActive(session.status) && now >= Date.parse(session.expires_at)

/** The session as seen at `now`: an active session past its deadline shows status `expired`. */
export const view = (session: Session, now: number): Session =>
  isExpiredAt(session, now) ? { ...session, status: "expired" } : session

/** Units per product of the session's items while it is active; nothing once final. */
export const reservationsOf = (session: Session): Reservations => {
  const reservations = new Map<string, number>()
  if (isActive(session.status)) {
    for (const item of session.items) reservations.set(item.id, (reservations.get(item.id) ?? 0) + item.quantity)
  }
  return reservations
}

const NO_RESERVATIONS: Reservations = new Map()

// ---------------------------------------------------------------------------------------------
// Items: validation and line ids

/** `li_` + 24 hex chars of sha256(session id, product id, n-th occurrence of that product). */
export const lineItemId = (sessionId: string, productId: string, occurrence: number): string =>
  "li_" + createHash("sha256").update(`${sessionId}\0${productId}\0${occurrence}`).digest("hex").slice(0, 24)

const lineItemIds = (sessionId: string, items: ReadonlyArray<Item>): ReadonlyArray<string> => {
  const seen = new Map<string, number>()
  return items.map((item) => {
    const occurrence = seen.get(item.id) ?? 0
    seen.set(item.id, occurrence + 1)
    return lineItemId(sessionId, item.id, occurrence)
  })
}

/** The product of each item, or the first unknown product id. */
const productsOf = (
  items: ReadonlyArray<Item>,
  catalog: CatalogSnapshot
): Either.Either<ReadonlyArray<Product>, UnknownProduct> => {
  const products: Array<Product> = []
  for (const [index, item] of items.entries()) {
    const product = catalog.products.get(item.id)
    if (product === undefined) return Either.left(new UnknownProduct({ index, productId: item.id }))
    products.push(product)
  }
  return Either.right(products)
}

/**
 * Requested items: every id known, then the running total per product within what is available
 * to this session; the index reported is the item at which the running total first exceeds.
 */
const checkItems = (
  items: ReadonlyArray<Item>,
  ctx: ReducerContext
): Either.Either<void, UnknownProduct | OutOfStock> =>
  Either.flatMap(productsOf(items, ctx.catalog), () => {
    const requested = new Map<string, number>()
    for (const [index, item] of items.entries()) {
      const total = (requested.get(item.id) ?? 0) + item.quantity
      requested.set(item.id, total)
      const available = ctx.available.get(item.id) ?? 0
      if (total > available) {
        return Either.left(new OutOfStock({ index, productId: item.id, requested: total, available }))
      }
    }
    return Either.void
  })

// ---------------------------------------------------------------------------------------------
// Readiness

const missing = (param: string, content: string): MessageError => ({
  type: "error",
  code: "missing",
  param,
  content_type: "plain",
  content
})

export interface ReadinessInput {
  readonly itemCount: number
  /** Whether some item is physical (or of a product no longer in the catalog). */
  readonly physical: boolean
  readonly address: Address | undefined
  readonly options: ReadonlyArray<FulfillmentOption>
  readonly selectedOptionId: string | undefined
  readonly buyer: Buyer | undefined
}

/**
 * One MessageError per gap that keeps the session from being paid, in field order: items,
 * address, fulfillment option (only once the items and the address allow options: a country no
 * method serves is reported as `invalid` on `$.fulfillment_address.country`), buyer.
 */
export const readinessMessages = (input: ReadinessInput): ReadonlyArray<MessageError> => {
  const messages: Array<MessageError> = []
  const hasItems = input.itemCount > 0
  if (!hasItems) messages.push(missing("$.items", "Add at least one item to the cart."))
  const needsAddress = input.physical && input.address === undefined
  if (needsAddress) {
    messages.push(missing("$.fulfillment_address", "A shipping address is required for physical items."))
  }
  const selected = input.options.some((option) => option.id === input.selectedOptionId)
  if (hasItems && !needsAddress && !selected) {
    if (input.physical && input.address !== undefined && input.options.length === 0) {
      const country = input.address.country.toUpperCase()
      messages.push({
        type: "error",
        code: "invalid",
        param: "$.fulfillment_address.country",
        content_type: "plain",
        content: `We do not ship to ${country}.`
      })
    } else {
      messages.push(missing("$.fulfillment_option_id", "Select a fulfillment option."))
    }
  }
  if (input.buyer === undefined) {
    messages.push(missing("$.buyer", "Buyer details (first name, last name and email) are required."))
  }
  return messages
}

const hasPhysicalItem = (items: ReadonlyArray<Item>, catalog: CatalogSnapshot): boolean =>
  items.some((item) => catalog.products.get(item.id)?.kind !== "digital")

/** Readiness of a stored session, from its stored options (nothing re-priced). */
const readinessOfSession = (session: Session, catalog: CatalogSnapshot): ReadonlyArray<MessageError> =>
  readinessMessages({
    itemCount: session.items.length,
    physical: hasPhysicalItem(session.items, catalog),
    address: session.fulfillment_address,
    options: session.fulfillment_options,
    selectedOptionId: session.fulfillment_option_id,
    buyer: session.buyer
  })

// ---------------------------------------------------------------------------------------------
// Pricing a draft: everything derived from items, address, buyer and the option choice

interface Draft {
  readonly items: ReadonlyArray<Item>
  readonly buyer: Buyer | undefined
  readonly address: Address | undefined
  /** The option selected before; kept while still offered. */
  readonly previousOptionId: string | undefined
  /** The option the request asks for; must be offered. */
  readonly requestedOptionId: string | undefined
  /** Discount codes as sent (the discount extension). */
  readonly codes: ReadonlyArray<string>
}

interface Priced {
  readonly status: "ready_for_payment" | "not_ready_for_payment"
  readonly line_items: ReadonlyArray<LineItem>
  readonly fulfillment_options: ReadonlyArray<FulfillmentOption>
  readonly selectedOptionId: string | undefined
  readonly totals: ReadonlyArray<Total>
  /** Readiness errors, then one info per rejected discount code. */
  readonly messages: ReadonlyArray<Message>
  /** Absent when the catalog has no coupons and no code was sent. */
  readonly discounts: Discounts | undefined
  /** The rejections with the index of their code (for `DiscountUnavailable`). */
  readonly rejected: ReadonlyArray<RejectedDiscount & { readonly index: number }>
}

/** The info message of a rejected code (param `$.discounts.codes[i]`). */
export const rejectionMessage = (rejected: RejectedDiscount & { readonly index: number }): MessageInfo => ({
  type: "info",
  param: rejected.index >= 0 ? `$.discounts.codes[${rejected.index}]` : "$.discounts",
  content_type: "plain",
  content: rejected.message
})

const selectOption = (
  options: ReadonlyArray<FulfillmentOption>,
  draft: Draft
): Either.Either<FulfillmentOption | undefined, UnknownFulfillmentOption> => {
  const byId = (id: string | undefined) => options.find((option) => option.id === id)
  if (draft.requestedOptionId !== undefined) {
    const requested = byId(draft.requestedOptionId)
    return requested === undefined
      ? Either.left(new UnknownFulfillmentOption({ optionId: draft.requestedOptionId }))
      : Either.right(requested)
  }
  return Either.right(byId(draft.previousOptionId) ?? cheapestOption(options))
}

const priceDraft = (
  sessionId: string,
  draft: Draft,
  ctx: ReducerContext
): Either.Either<Priced, UnknownProduct | UnknownFulfillmentOption> =>
  Either.flatMap(productsOf(draft.items, ctx.catalog), (products) => {
    const rule = resolveTaxRule(ctx.catalog.taxRules, draft.address)
    const ids = lineItemIds(sessionId, draft.items)
    const lines = draft.items.map((item, i) => ({ id: ids[i] ?? "", item, product: products[i] as Product }))
    const evaluated = evaluateDiscounts({
      coupons: ctx.catalog.coupons,
      codes: draft.codes,
      lineBases: lines.map((line) => multiplyAmount(line.product.unit_amount, line.item.quantity)),
      now: ctx.now,
      redemptions: ctx.redemptions
    })
    const line_items = priceLineItems(lines, rule, evaluated.lineDiscounts)
    const discounts: Discounts | undefined = ctx.catalog.coupons.length === 0 && draft.codes.length === 0
      ? undefined
      : {
        codes: draft.codes,
        applied: evaluated.applied,
        rejected: evaluated.rejected.map(({ code, message, reason }) => ({ code, reason, message }))
      }
    const options = fulfillmentOptions({ catalog: ctx.catalog, products, address: draft.address, rule, now: ctx.now })
    return Either.map(selectOption(options, draft), (selected) => {
      const messages = readinessMessages({
        itemCount: draft.items.length,
        physical: products.some((product) => product.kind !== "digital"),
        address: draft.address,
        options,
        selectedOptionId: selected?.id,
        buyer: draft.buyer
      })
      return {
        status: messages.length === 0 ? "ready_for_payment" : "not_ready_for_payment",
        line_items,
        fulfillment_options: options,
        selectedOptionId: selected?.id,
        totals: computeTotals(line_items, selected),
        messages: [...messages, ...evaluated.rejected.map(rejectionMessage)],
        discounts,
        rejected: evaluated.rejected
      }
    })
  })

/** Sets or removes the optional fields buyer, fulfillment_address and fulfillment_option_id. */
const withChoices = (
  session: Session,
  buyer: Buyer | undefined,
  address: Address | undefined,
  optionId: string | undefined
): Session => {
  const { buyer: _buyer, fulfillment_address: _address, fulfillment_option_id: _option, ...rest } = session
  return {
    ...rest,
    ...(buyer === undefined ? {} : { buyer }),
    ...(address === undefined ? {} : { fulfillment_address: address }),
    ...(optionId === undefined ? {} : { fulfillment_option_id: optionId })
  }
}

const withoutDiscounts = (session: Session): Session => {
  const { discounts: _discounts, ...rest } = session
  return rest
}

/** The session with a draft and its pricing applied. */
const applyPriced = (session: Session, draft: Draft, priced: Priced): Session =>
  withChoices(
    {
      ...withoutDiscounts(session),
      ...(priced.discounts === undefined ? {} : { discounts: priced.discounts }),
      status: priced.status,
      items: draft.items,
      line_items: priced.line_items,
      fulfillment_options: priced.fulfillment_options,
      totals: priced.totals,
      messages: priced.messages
    },
    draft.buyer,
    draft.address,
    priced.selectedOptionId
  )

const normalizeAddress = (address: Address | undefined): Address | undefined =>
  address === undefined ? undefined : { ...address, country: address.country.toUpperCase() }

// ---------------------------------------------------------------------------------------------
// Commands

/** Merchant capabilities, interventions narrowed to what the agent declared it supports. */
export const sessionCapabilities = (
  catalog: CatalogSnapshot,
  agent: AgentCapabilities | undefined
): Capabilities => {
  const declared = agent?.interventions?.supported
  const merchant = catalog.interventions
  const extensions = catalog.coupons.length > 0 &&
      !catalog.extensions.some((extension) => extension.name === DISCOUNT_EXTENSION.name)
    ? [...catalog.extensions, { ...DISCOUNT_EXTENSION, extends: [...DISCOUNT_EXTENSION.extends] }]
    : catalog.extensions
  const interventions =
    merchant === undefined || declared === undefined
      ? merchant
      : { ...merchant, supported: merchant.supported.filter((value) => declared.includes(value)) }
  return {
    payment: { handlers: catalog.paymentHandlers },
    ...(interventions === undefined ? {} : { interventions }),
    ...(extensions.length === 0 ? {} : { extensions })
  }
}

const transition = (session: Session): Transition => ({ session, reservations: reservationsOf(session) })

const create = (
  id: string,
  request: CheckoutSessionCreateRequest,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  const draft: Draft = {
    items: request.items,
    buyer: request.buyer,
    address: normalizeAddress(request.fulfillment_address),
    previousOptionId: undefined,
    requestedOptionId: undefined,
    codes: request.discounts?.codes ?? []
  }
  return Either.flatMap(checkItems(request.items, ctx), () =>
    Either.map(priceDraft(id, draft, ctx), (priced) => {
      const blank: Session = {
        id,
        status: priced.status,
        currency: ctx.catalog.currency,
        line_items: [],
        fulfillment_options: [],
        totals: [],
        messages: [],
        links: ctx.catalog.links,
        capabilities: sessionCapabilities(ctx.catalog, request.capabilities),
        created_at: iso(ctx.now),
        updated_at: iso(ctx.now),
        expires_at: iso(ctx.now + ctx.sessionTtlSeconds * 1000),
        items: []
      }
      return transition(applyPriced(blank, draft, priced))
    })
  )
}

const update = (
  current: Session,
  request: CheckoutSessionUpdateRequest,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionNotModifiable({ status: current.status }))
  const draft: Draft = {
    items: request.items ?? current.items,
    buyer: request.buyer ?? current.buyer,
    address: normalizeAddress(request.fulfillment_address) ?? current.fulfillment_address,
    previousOptionId: current.fulfillment_option_id,
    requestedOptionId: request.fulfillment_option_id,
    codes: request.discounts?.codes ?? current.discounts?.codes ?? []
  }
  const checked = request.items === undefined ? Either.void : checkItems(request.items, ctx)
  return Either.flatMap(checked, () =>
    Either.map(priceDraft(current.id, draft, ctx), (priced) =>
      transition({
        ...applyPriced(current, draft, priced),
        updated_at: iso(ctx.now),
        expires_at: iso(ctx.now + ctx.sessionTtlSeconds * 1000)
      })
    )
  )
}

const isError = (message: Message): message is MessageError => message.type === "error"

/** The rejection of an automatic coupon that no longer applies (it has no code index). */
const lostAutomatic = (
  couponId: string,
  code: string,
  ctx: ReducerContext,
  session: Session
): RejectedDiscount & { readonly index: number } => {
  const coupon = ctx.catalog.coupons.find((c) => c.id === couponId)
  const base = session.line_items.reduce((sum, line) => sum + line.base_amount, 0)
  const why = coupon === undefined ? undefined : ineligibility(coupon, base, ctx.now, ctx.redemptions)
  return {
    index: -1,
    code,
    reason: why?.reason ?? "discount_code_invalid",
    message: why?.message ?? `Discount ${code} is no longer available.`
  }
}

const prepareCompletion = (
  current: Session,
  buyer: Buyer | undefined,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "complete" }))
  const draft: Draft = {
    items: current.items,
    buyer: buyer ?? current.buyer,
    address: current.fulfillment_address,
    previousOptionId: current.fulfillment_option_id,
    requestedOptionId: undefined,
    codes: current.discounts?.codes ?? []
  }
  return Either.flatMap(priceDraft(current.id, draft, ctx), (priced): Either.Either<Transition, ReducerError> => {
    if (priced.status !== "ready_for_payment") {
      return Either.left(new SessionNotReady({ messages: priced.messages.filter(isError) }))
    }
    const session: Session = { ...applyPriced(current, draft, priced), updated_at: iso(ctx.now) }
    // A discount the agent saw applied must still apply: never charge more than the shown total.
    const now = new Set((priced.discounts?.applied ?? []).map((applied) => applied.coupon.id))
    const lost = (current.discounts?.applied ?? []).find((applied) => !now.has(applied.coupon.id))
    if (lost !== undefined) {
      const rejected = priced.rejected.find((r) => r.code.trim().toUpperCase() === lost.code.toUpperCase()) ??
        lostAutomatic(lost.coupon.id, lost.code, ctx, session)
      return Either.left(new DiscountUnavailable({ rejected, session }))
    }
    return Either.right(transition(session))
  })
}

/**
 * Records the order. The deadline is not re-checked: `PrepareCompletion` checked it before the
 * payment was taken, and a charged payment must always yield its order. A session already
 * completed, canceled or expired in storage is refused.
 */
const markCompleted = (state: Session, order: OrderSummary, ctx: ReducerContext): Either.Either<Transition, ReducerError> => {
  if (isFinal(state.status)) return Either.left(new SessionFinal({ status: state.status, command: "complete" }))
  return Either.right({
    session: {
      ...state,
      status: "completed",
      order,
      messages: state.messages.filter((message) => !(message.type === "error" && message.code === "payment_declined")),
      updated_at: iso(ctx.now)
    },
    reservations: NO_RESERVATIONS
  })
}

const recordPaymentFailure = (
  current: Session,
  message: MessageError,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "complete" }))
  return Either.right(
    transition({
      ...current,
      messages: [
        ...readinessOfSession(current, ctx.catalog),
        ...current.messages.filter((m) => m.type === "info"),
        message
      ],
      updated_at: iso(ctx.now)
    })
  )
}

const cancel = (current: Session, ctx: ReducerContext): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "cancel" }))
  return Either.right({ session: { ...current, status: "canceled", updated_at: iso(ctx.now) }, reservations: NO_RESERVATIONS })
}

/** Expires an active session past its deadline; any other session is returned unchanged. */
const expire = (state: Session, ctx: ReducerContext): Either.Either<Transition, ReducerError> =>
  Either.right(transition(view(state, ctx.now)))

/**
 * Applies `command` to `state` (`undefined` only for `Create`). An active session whose
 * `expires_at` has passed is treated as `expired` first (except by `MarkCompleted`, see there).
 *
 * Calling `Create` on an existing session, or any other command without one, is a programming
 * error of the caller (the service looks the session up first) and throws.
 */
export const reduce = (
  state: Session | undefined,
  command: SessionCommand,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (command._tag === "Create") {
    if (state !== undefined) throw new Error(`reduce: Create on existing session ${state.id}`)
    return create(command.id, command.request, ctx)
  }
  if (state === undefined) throw new Error(`reduce: ${command._tag} without a session`)
  const current = view(state, ctx.now)
  switch (command._tag) {
    case "Update":
      return update(current, command.request, ctx)
    case "PrepareCompletion":
      return prepareCompletion(current, command.buyer, ctx)
    case "MarkCompleted":
      return markCompleted(state, command.order, ctx)
    case "RecordPaymentFailure":
      return recordPaymentFailure(current, command.message, ctx)
    case "Cancel":
      return cancel(current, ctx)
    case "Expire":
      return expire(state, ctx)
  }
}
