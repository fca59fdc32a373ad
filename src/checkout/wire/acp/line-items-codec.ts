/** The codec of the line-items format, shared by 2026-01-30 and 2026-04-17 (`v2026-01-30.ts`, `v2026-04-17.ts`). */
import type { CheckoutCodec } from "./codec.ts"
import { requestCodec } from "./codec.ts"
import { requests20260130, requests20260417, type Version2026 } from "./line-items-request-schemas.ts"
import { toCancel, toComplete, toCreate, toUpdate } from "./line-items-requests.ts"
import { responseSchemasOf } from "./line-items-response-schemas.ts"
import { encodeSession, encodeSessionWithOrder, param2026 } from "./line-items-responses.ts"

export const makeLineItemsCodec = (version: Version2026): CheckoutCodec => {
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
