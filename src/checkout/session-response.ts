/**
 * Checkout session responses, built directly from the typed session instead of being encoded by
 * the endpoint's schema at run time.
 *
 * The session schemas have no transformations (their encoded form is their type, checked by the
 * compiler in `toCheckoutSession`), so encoding one only re-validates what the domain built and
 * drops the fields the wire form does not have: a full schema pass over a large nested object on
 * every session response (issue 9). Here the internal fields are dropped by name and the value is
 * serialized as is (a GET sends the store's serialization, see `sessionJsonResponse`); the
 * endpoint schemas still document the responses (OpenAPI), and the HTTP tests check every session
 * response against them strictly (no field missing, none extra, anywhere in the tree).
 */
import { HttpServerResponse } from "@effect/platform"
import type { CheckoutSessionWithOrder, OrderSummary } from "./checkout-schemas.ts"
import { type Session, toCheckoutSession } from "./session-model.ts"

/** The wire form of a completed session: the session and its order. */
export const toCheckoutSessionWithOrder = (session: Session & { readonly order: OrderSummary }): CheckoutSessionWithOrder => {
  const { items: _items, ...wire } = session
  const encoded: typeof CheckoutSessionWithOrder.Encoded = wire
  return encoded
}

/** A JSON response with the session's wire form. */
export const sessionResponse = (session: Session, status: 200 | 201 = 200) =>
  HttpServerResponse.unsafeJson(toCheckoutSession(session), { status })

/**
 * A session's wire form already serialized (`CheckoutService.getJson`): GET answers with the text
 * the store produced, without parsing the session and serializing it again.
 */
export const sessionJsonResponse = (json: string) =>
  HttpServerResponse.text(json, { status: 200, contentType: "application/json" })

export const completedSessionResponse = (session: Session & { readonly order: OrderSummary }) =>
  HttpServerResponse.unsafeJson(toCheckoutSessionWithOrder(session), { status: 200 })
