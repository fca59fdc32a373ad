/** The reducer's commands that complete a session (CONTRACT §5). */
import { Either } from "effect"
import { type Address } from "../../catalog/model/fulfillment.ts"
import { type OrderSummary } from "../../orders/model/order.ts"
import type { AuthenticationRequest } from "../../payments/model/issuer-authentication.ts"
import { ineligibility, type RejectedDiscount } from "../pricing/discounts.ts"
import type { SessionDetails } from "./details.ts"
import { applyPriced, type Draft, normalizeAddress, priceDraft } from "./draft.ts"
import { interventionMessages, readinessOfSession } from "./readiness.ts"
import type { Buyer, Message, MessageError } from "./schemas.ts"
import {
  AuthenticationResultRequired,
  DiscountUnavailable,
  FulfillmentAddressChanged,
  PriceChanged,
  pricingTime,
  type ReducerContext,
  type ReducerError,
  type Session,
  SessionFinal,
  SessionNotReady,
  type Transition
} from "./session.ts"
import { buyerAfter, isFinal, iso, NO_RESERVATIONS, transition, withMergedDetails } from "./transition.ts"

const sameAddress = (a: Address | undefined, b: Address | undefined): boolean =>
  JSON.stringify(normalizeAddress(a)) === JSON.stringify(normalizeAddress(b))

const isError = (message: Message): message is MessageError => message.type === "error"

/** An automatic coupon has no code index. */
const lostAutomatic = (
  couponId: string,
  code: string,
  ctx: ReducerContext,
  session: Session
): RejectedDiscount & { readonly index: number } => {
  const coupon = ctx.catalog.coupons.find((c) => c.id === couponId)
  const base = session.line_items.reduce((sum, line) => sum + line.base_amount, 0)
  const why = coupon === undefined ? undefined : ineligibility(coupon, base, pricingTime(ctx), ctx.redemptions)
  return {
    index: -1,
    code,
    reason: why?.reason ?? "discount_code_invalid",
    message: why?.message ?? `Discount ${code} is no longer available.`
  }
}

/** The first line whose unit price the catalog changed since `current` was priced, with `repriced` to show. */
const totalOf = (session: Session) => session.totals.find((total) => total.type === "total")?.amount ?? 0

const appliedOf = (session: Session) =>
  JSON.stringify((session.discounts?.applied ?? []).map((applied) => [applied.coupon.id, applied.amount]))

/**
 * The first line whose price (or, the discounts unchanged, whose tax: a new tax category) the catalog
 * changed since `current` was priced, with `repriced` to show; a new automatic discount alone only lowers it.
 */
const changedPrice = (current: Session, repriced: Session): PriceChanged | undefined => {
  const discountsKept = appliedOf(current) === appliedOf(repriced)
  const totalChanged = discountsKept && totalOf(current) !== totalOf(repriced)
  // A changed kind changes the fulfillment, not a line: the first line is named then.
  const lineChanged = totalChanged &&
    repriced.line_items.some((line) => current.line_items.find((old) => old.id === line.id)?.total !== line.total)
  for (const [index, line] of repriced.line_items.entries()) {
    const shown = current.line_items.find((old) => old.id === line.id)
    if (shown === undefined) continue
    const changed = shown.base_amount !== line.base_amount ||
      (totalChanged && (shown.total !== line.total || !lineChanged))
    if (!changed) continue
    const info: Message = {
      type: "info",
      param: `$.line_items[${index}]`,
      content_type: "plain",
      content: `The price of ${line.item.id} changed since the session was priced; review the new total.`
    }
    return new PriceChanged({
      index,
      productId: line.item.id,
      was: totalOf(current),
      now: totalOf(repriced),
      session: { ...repriced, messages: [...repriced.messages, info] }
    })
  }
  return undefined
}

/**
 * A session waiting for issuer authentication is paid only with a result, in a version that has
 * the flow (in another the provider declines the card); re-priced, it is `ready_for_payment` again.
 */
export const prepareCompletion = (
  current: Session,
  change: {
    readonly buyer: Buyer | undefined
    readonly details?: SessionDetails | undefined
    readonly fulfillment_address?: Address | undefined
    readonly canAuthenticate?: boolean | undefined
    readonly authenticating?: boolean | undefined
  },
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "complete" }))
  if (
    current.status === "authentication_required" && change.canAuthenticate === true && change.authenticating !== true
  ) {
    return Either.left(new AuthenticationResultRequired())
  }
  if (
    change.fulfillment_address !== undefined && !sameAddress(change.fulfillment_address, current.fulfillment_address)
  ) {
    return Either.left(new FulfillmentAddressChanged())
  }
  const draft: Draft = {
    items: current.items,
    buyer: buyerAfter(current, change),
    address: current.fulfillment_address,
    previousOptionId: current.fulfillment_option_id,
    requestedOptionId: undefined,
    codes: current.discounts?.codes ?? [],
    suggested: current.details?.suggested_prices
  }
  return Either.flatMap(priceDraft(current.id, draft, ctx), (priced): Either.Either<Transition, ReducerError> => {
    if (priced.status !== "ready_for_payment") {
      return Either.left(new SessionNotReady({ messages: priced.messages.filter(isError) }))
    }
    const session: Session = {
      ...withMergedDetails(applyPriced(current, draft, priced), change),
      updated_at: iso(ctx.now)
    }
    // A price the agent saw must still be the price: never charge another total than the one shown.
    const changed = changedPrice(current, session)
    if (changed !== undefined) return Either.left(changed)
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

/** A payment failure message is the last payment's: the next outcome replaces it. */
const isPaymentFailure = (message: Message) => message.type === "error" && message.code === "payment_declined"

/** The deadline is not re-checked: `PrepareCompletion` did, and a charged payment always yields its order. */
export const markCompleted = (
  state: Session,
  order: OrderSummary,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(state.status)) return Either.left(new SessionFinal({ status: state.status, command: "complete" }))
  const { authentication: _authentication, ...session } = state
  return Either.right({
    session: {
      ...session,
      status: "completed",
      order,
      messages: state.messages.filter((message) => !isPaymentFailure(message)),
      updated_at: iso(ctx.now)
    },
    reservations: NO_RESERVATIONS
  })
}

const messagesAfterPayment = (session: Session, ctx: ReducerContext, latest: ReadonlyArray<MessageError>) => [
  ...readinessOfSession(session, ctx.catalog),
  ...interventionMessages(session.capabilities),
  ...session.messages.filter((m) => m.type === "info"),
  ...latest
]

export const recordPaymentFailure = (
  current: Session,
  message: MessageError,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "complete" }))
  const { authentication: _authentication, ...session } = current
  return Either.right(
    transition({ ...session, messages: messagesAfterPayment(current, ctx, [message]), updated_at: iso(ctx.now) })
  )
}

/** The session keeps its stock and is completed again with the agent's result. */
export const requireAuthentication = (
  current: Session,
  request: AuthenticationRequest,
  ctx: ReducerContext
): Either.Either<Transition, ReducerError> => {
  if (isFinal(current.status)) return Either.left(new SessionFinal({ status: current.status, command: "complete" }))
  return Either.right(
    transition({
      ...current,
      status: "authentication_required",
      authentication: request,
      messages: messagesAfterPayment(current, ctx, []),
      updated_at: iso(ctx.now)
    })
  )
}
