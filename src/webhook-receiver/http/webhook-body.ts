/**
 * The order-event receiver's body validation (CONTRACT §8): JSON nested at most `MAX_JSON_DEPTH`
 * levels deep, text storage can keep, then the event in the version it is read in
 * (`orders/wire/acp/versions.ts`); the first problem as the webhook error object
 * `{code: missing | invalid | invalid_json, message, param}`.
 */
import { Either } from "effect"
import { ORDER_EVENT_WIRES, type ReceivedOrderEvent, recognisedVersion } from "../../orders/wire/acp/versions.ts"
import type { ApiVersionName } from "../../shared/api-versions.ts"
import { jsonDepthProblem, TOO_DEEP_MESSAGE } from "../../shared/json-depth.ts"
import { firstFailureAtJsonPath } from "../../shared/schema-failure.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../../shared/storable-text.ts"
import type { WebhookErrorObject } from "./webhook.ts"

/**
 * Decodes a parsed JSON body as an event of `version` (default: the version its shape shows);
 * failure is the 400 error object (`invalid_request`, missing | invalid).
 */
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
 * Parses a raw body as the receiver keeps it: JSON (syntax errors → `invalid_json`, param `$`),
 * nested at most `MAX_JSON_DEPTH` levels deep (`invalid_json` at the first too-deep value), with
 * only text storage can keep (`invalid` at the first string that is not). The value may then be
 * decoded, re-serialized and stored: nothing after this walks deeper than the bound.
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
  // The whole payload is kept and served back: all of its text must be storable, as every body's.
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

/**
 * Parses a raw body (`parseWebhookJson`) and decodes it as an event of `version` (default:
 * recognised from the shape).
 */
export const parseWebhookBody = (
  rawBody: string | Uint8Array,
  version?: ApiVersionName
): Either.Either<ReceivedOrderEvent, WebhookErrorObject> =>
  Either.flatMap(parseWebhookJson(rawBody), (json) => decodeWebhookEvent(json, version))
