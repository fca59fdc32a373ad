/** The checkout API's codec of the line-items format, for 2026-01-30 and 2026-04-17. */
import type { CheckoutCodec } from "./checkout-codec.ts"
import { requestCodec } from "./checkout-codec.ts"
import { requests20260130, requests20260417, type Version2026 } from "./request-schemas-2026.ts"
import { toCancel, toComplete, toCreate, toUpdate } from "./requests-2026.ts"
import { responseSchemasOf } from "./response-schemas-2026.ts"
import { encodeSession, encodeSessionWithOrder, param2026 } from "./responses-2026.ts"

export const makeCodec2026 = (version: Version2026): CheckoutCodec => {
  const requests = version === "2026-04-17" ? requests20260417 : requests20260130
  const responses = responseSchemasOf(version)
  return {
    version,
    create: requestCodec(requests.create, toCreate),
    update: requestCodec(requests.update, toUpdate),
    complete: requestCodec(requests.complete, toComplete),
    cancel: requestCodec(requests.cancel, toCancel),
    session: { schema: responses.session, encode: encodeSession(version) },
    sessionWithOrder: { schema: responses.sessionWithOrder, encode: encodeSessionWithOrder(version) },
    completeResponse: responses.completeResponse,
    sessionIsStoredProjection: false,
    param: param2026
  }
}
