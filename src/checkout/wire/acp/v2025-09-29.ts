/**
 * 2025-09-29: the interface document's format, which is the domain's (`session/schemas.ts`), so
 * requests are the domain's inputs as decoded and a session's response is its stored projection.
 */
import {
  CheckoutSession,
  CheckoutSessionCompleteRequest,
  CheckoutSessionCreateRequest,
  CheckoutSessionUpdateRequest,
  CheckoutSessionWithOrder
} from "../../session/schemas.ts"
import { toCheckoutSession, toCheckoutSessionWithOrder } from "../../session/session.ts"
import { asIs, type CheckoutCodec } from "./codec.ts"

export const checkoutCodec20250929: CheckoutCodec = {
  version: "2025-09-29",
  create: asIs(CheckoutSessionCreateRequest),
  update: asIs(CheckoutSessionUpdateRequest),
  complete: asIs(CheckoutSessionCompleteRequest),
  // The interface document defines no cancel body: one sent is held to the common rules, then ignored.
  cancel: undefined,
  session: { schema: CheckoutSession, encode: toCheckoutSession },
  sessionWithOrder: { schema: CheckoutSessionWithOrder, encode: toCheckoutSessionWithOrder },
  // A card that needs issuer authentication is declined in this version: it has no such answer.
  completeResponse: CheckoutSessionWithOrder,
  sessionIsStoredProjection: true,
  param: (path) => path
}
