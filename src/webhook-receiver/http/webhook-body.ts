/** The order-event receiver's body validation (CONTRACT §8): the first problem, as the webhook error object. */
import { Either } from "effect"
import { ORDER_EVENT_WIRES, type ReceivedOrderEvent, recognisedVersion } from "../../orders/wire/acp/versions.ts"
import type { ApiVersionName } from "../../shared/api-versions.ts"
import { jsonDepthProblem, TOO_DEEP_MESSAGE } from "../../shared/json-depth.ts"
import { firstFailureAtJsonPath } from "../../shared/schema-failure.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../../shared/storable-text.ts"
import type { WebhookErrorObject } from "./webhook.ts"

/** Decodes parsed JSON as an event of `version` (default: the one its shape shows). */
export const decodeWebhookEvent = (
  input: unknown,
  version: ApiVersionName = recognisedVersion(input)
): Either.Either<ReceivedOrderEvent, WebhookErrorObject> =>
  Either.mapBoth(ORDER_EVENT_WIRES[version].received.decode(input), {
    onLeft: (error): WebhookErrorObject => {
      const first = firstFailureAtJsonPath(error)
      return { type: "invalid_request", code: first.kind, message: first.message, param: first.param }
    },
    onRight: (event) => ({ version, ...event })
  })

/**
 * JSON within `MAX_JSON_DEPTH`, all of its text storable (the payload is kept and served back): nothing
 * after this walks deeper than the bound, so the value may be decoded, re-serialized and stored.
 */
export const parseWebhookJson = (rawBody: string | Uint8Array): Either.Either<unknown, WebhookErrorObject> => {
  let json: unknown
  try {
    json = JSON.parse(typeof rawBody === "string" ? rawBody : Buffer.from(rawBody).toString("utf8"))
  } catch {
    return Either.left({
      type: "invalid_request",
      code: "invalid_json",
      message: "request body is not valid JSON",
      param: "$"
    })
  }
  const tooDeep = jsonDepthProblem(json)
  if (tooDeep !== undefined) {
    return Either.left({ type: "invalid_request", code: "invalid_json", message: TOO_DEEP_MESSAGE, param: tooDeep })
  }
  const unstorable = unstorableTextPath(json)
  if (unstorable !== undefined) {
    return Either.left({
      type: "invalid_request",
      code: "invalid",
      message: `The body ${UNSTORABLE_TEXT_MESSAGE}.`,
      param: unstorable
    })
  }
  return Either.right(json)
}

export const parseWebhookBody = (
  rawBody: string | Uint8Array,
  version?: ApiVersionName
): Either.Either<ReceivedOrderEvent, WebhookErrorObject> =>
  Either.flatMap(parseWebhookJson(rawBody), (json) => decodeWebhookEvent(json, version))
