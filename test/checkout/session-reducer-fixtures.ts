/**
 * What the session reducer's test files (`session-reducer*.test.ts`) share: unwrapping a
 * transition or a failure, a created and a ready session, times around the idle deadline, a
 * decline message, an order, and a session moved to a status.
 */
import { Either } from "effect"
import { reduce } from "../../src/checkout/session/reducer.ts"
import type { CheckoutSessionCreateRequest, MessageError } from "../../src/checkout/session/schemas.ts"
import {
  type ReducerContext,
  type ReducerError,
  type Session,
  SessionCommand,
  type Transition
} from "../../src/checkout/session/session.ts"
import { buyer, context, NOW, NY, TTL_SECONDS } from "../support/fixtures.ts"

/** The transition of a successful reduction (throws on a failure). */
export const ok = (result: Either.Either<Transition, ReducerError>): Transition =>
  Either.getOrThrowWith(result, (error) => new Error(`expected success, got ${error._tag}`))

/** The error of a failed reduction (throws on a success). */
export const fail = (result: Either.Either<Transition, ReducerError>): ReducerError =>
  Either.getOrThrowWith(Either.flip(result), () => new Error("expected a failure"))

/** The session `request` creates. */
export const create = (request: CheckoutSessionCreateRequest, ctx: ReducerContext = context(), id = "cs_test") =>
  ok(reduce(undefined, SessionCommand.Create({ id, request }), ctx)).session

/** A ready NY session: 2 t-shirts, standard shipping selected. */
export const readySession = (ctx: ReducerContext = context()) =>
  create({ items: [{ id: "tshirt-classic", quantity: 2 }], buyer, fulfillment_address: NY }, ctx)

/** A reducer context at `ms`. */
export const at = (ms: number, overrides: Partial<ReducerContext> = {}) => context({ now: ms, ...overrides })
/** The idle deadline of a session created or last updated at `NOW`. */
export const EXPIRES = NOW + TTL_SECONDS * 1000
/** A minute after `NOW`, well before `EXPIRES`. */
export const LATER = NOW + 60_000
export const iso = (ms: number) => new Date(ms).toISOString()
export const map = (entries: Record<string, number>) => new Map(Object.entries(entries))
export const declined: MessageError = {
  type: "error",
  code: "payment_declined",
  param: "$.payment_data",
  content_type: "plain",
  content: "The card was declined."
}
export const order = {
  id: "ord_1",
  checkout_session_id: "cs_test",
  permalink_url: "https://merchant.example/orders/ord_1"
}

export const withStatus = (session: Session, status: Session["status"]): Session => ({ ...session, status })
