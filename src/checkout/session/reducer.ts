/** The session state machine (CONTRACT §5), pure: time is `ctx.now`, line item ids a hash, no I/O. */
import { Either } from "effect"
import type { CatalogSnapshot } from "../../catalog/model/catalog.ts"
import { type ExtensionDeclaration } from "../../catalog/model/catalog.ts"
import { DISCOUNT_EXTENSION } from "../pricing/discounts.ts"
import { markCompleted, prepareCompletion, recordPaymentFailure, requireAuthentication } from "./completion.ts"
import { mergeDetails, type SessionDetails } from "./details.ts"
import { applyPriced, checkItems, type Draft, normalizeAddress, priceDraft } from "./draft.ts"
import type { Capabilities } from "./schemas.ts"
import {
  type AgentDeclaration,
  type CreateSessionInput,
  FulfillmentSelectionMismatch,
  NoCommonPaymentHandler,
  type ReducerContext,
  type ReducerError,
  type Session,
  type SessionCommand,
  SessionFinal,
  SessionNotModifiable,
  type Transition,
  UnsupportedCurrency,
  type UpdateSessionInput
} from "./session.ts"
import { buyerAfter, isFinal, iso, NO_RESERVATIONS, transition, withDetails } from "./transition.ts"
import { view } from "./view.ts"

/** Whether an extension of the merchant is one the agent named (`discount` names `dev.proto.discount`). */
const namesExtension = (declared: ReadonlyArray<string>, name: string): boolean =>
  declared.some((agentName) => agentName === name || name.endsWith(`.${agentName}`))

/** The catalog's, and the discount extension when it has coupons and does not declare it. */
export const merchantExtensions = (catalog: CatalogSnapshot): ReadonlyArray<ExtensionDeclaration> =>
  catalog.coupons.length > 0 && !catalog.extensions.some((extension) => extension.name === DISCOUNT_EXTENSION.name)
    ? [...catalog.extensions, { ...DISCOUNT_EXTENSION, extends: [...DISCOUNT_EXTENSION.extends] }]
    : catalog.extensions

/** Narrowed to what the agent declares; sharing no payment handler is refused: it could never pay. */
export const sessionCapabilities = (
  catalog: CatalogSnapshot,
  agent: AgentDeclaration | undefined
): Either.Either<Capabilities, NoCommonPaymentHandler> => {
  const declared = agent?.interventions?.supported
  const merchant = catalog.interventions
  const offered = merchantExtensions(catalog)
  const agentExtensions = agent?.extensions
  const extensions = agentExtensions === undefined
    ? offered
    : offered.filter((extension) => namesExtension(agentExtensions, extension.name))
  const interventions = merchant === undefined || declared === undefined
    ? merchant
    : { ...merchant, supported: merchant.supported.filter((value) => declared.includes(value)) }
  const handlerNames = agent?.payment_handler_names
  const handlers = handlerNames === undefined
    ? catalog.paymentHandlers
    : catalog.paymentHandlers.filter((handler) => handlerNames.includes(handler.name))
  if (handlers.length === 0) {
    return Either.left(new NoCommonPaymentHandler({ offered: catalog.paymentHandlers.map((h) => h.name) }))
  }
  return Either.right({
    payment: { handlers },
    ...(interventions === undefined ? {} : { interventions }),
    ...(extensions.length === 0 ? {} : { extensions })
  })
}

const create = (
  id: string,
  request: CreateSessionInput,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (request.currency !== undefined && request.currency.toLowerCase() !== ctx.catalog.currency) {
    return Either.left(new UnsupportedCurrency({ currency: request.currency, expected: ctx.catalog.currency }))
  }
  const capabilities = sessionCapabilities(ctx.catalog, request.capabilities)
  if (Either.isLeft(capabilities)) return Either.left(capabilities.left)
  const draft: Draft = {
    items: request.items,
    buyer: request.buyer,
    address: normalizeAddress(request.fulfillment_address),
    previousOptionId: undefined,
    requestedOptionId: undefined,
    codes: request.discounts?.codes ?? [],
    suggested: request.details?.suggested_prices
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
        capabilities: capabilities.right,
        created_at: iso(ctx.now),
        updated_at: iso(ctx.now),
        expires_at: iso(ctx.now + ctx.sessionTtlSeconds * 1000),
        items: []
      }
      return transition(withDetails(applyPriced(blank, draft, priced), mergeDetails(undefined, request.details, false)))
    }))
}

/** One option serves the whole order: the selection must be of its type and name the session's items. */
const checkSelection = (
  session: Session,
  selection: UpdateSessionInput["fulfillment_selection"]
): Either.Either<void, FulfillmentSelectionMismatch> => {
  if (selection === undefined) return Either.void
  const option = session.fulfillment_options.find((o) => o.id === session.fulfillment_option_id)
  if (option !== undefined && option.type !== selection.type) {
    return Either.left(
      new FulfillmentSelectionMismatch({
        field: "type",
        message: `Fulfillment option ${option.id} is of type ${option.type}, not ${selection.type}.`
      })
    )
  }
  const known = new Set([...session.items.map((item) => item.id), ...session.line_items.map((line) => line.id)])
  const unknown = selection.item_ids.find((id) => !known.has(id))
  return unknown === undefined ? Either.void : Either.left(
    new FulfillmentSelectionMismatch({
      field: "item_ids",
      message: `${unknown} is neither an item nor a line item of this session.`
    })
  )
}

const update = (
  current: Session,
  request: UpdateSessionInput,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionNotModifiable({ status: current.status }))
  const details = mergeDetails(current.details, request.details, request.buyer !== undefined)
  const draft: Draft = {
    items: request.items ?? current.items,
    buyer: buyerAfter(current, request),
    address: normalizeAddress(request.fulfillment_address) ?? current.fulfillment_address,
    previousOptionId: current.fulfillment_option_id,
    requestedOptionId: request.fulfillment_option_id,
    codes: request.discounts?.codes ?? current.discounts?.codes ?? [],
    suggested: details?.suggested_prices
  }
  const checked = request.items === undefined ? Either.void : checkItems(request.items, ctx, current.items)
  return Either.flatMap(checked, () =>
    Either.flatMap(priceDraft(current.id, draft, ctx), (priced) => {
      const session: Session = {
        ...withDetails(applyPriced(current, draft, priced), details),
        updated_at: iso(ctx.now),
        expires_at: iso(ctx.now + ctx.sessionTtlSeconds * 1000)
      }
      return Either.map(checkSelection(session, request.fulfillment_selection), () => transition(session))
    }))
}

const cancel = (
  current: Session,
  details: SessionDetails | undefined,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "cancel" }))
  return Either.right({
    session: {
      ...withDetails(current, mergeDetails(current.details, details, false)),
      status: "canceled",
      updated_at: iso(ctx.now)
    },
    reservations: NO_RESERVATIONS
  })
}

const expire = (state: Session, ctx: ReducerContext): Either.Either<Transition, ReducerError> =>
  Either.right(transition(view(state, ctx.now)))

/**
 * An active session past its `expires_at` is treated as `expired` first, except by `MarkCompleted`.
 * `Create` on a session, or another command without one, is the caller's bug and throws.
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
      return prepareCompletion(current, command, ctx)
    case "RequireAuthentication":
      return requireAuthentication(current, command.request, ctx)
    case "MarkCompleted":
      return markCompleted(state, command.order, ctx)
    case "RecordPaymentFailure":
      return recordPaymentFailure(current, command.message, ctx)
    case "Cancel":
      return cancel(current, command.details, ctx)
    case "Expire":
      return expire(state, ctx)
  }
}
