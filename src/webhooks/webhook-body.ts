/**
 * The order-event receiver's body validation (CONTRACT §8): JSON, text storage can keep, then the
 * event schema; the first problem as the webhook error object `{code: missing | invalid |
 * invalid_json, message, param}`.
 */
import { Either, Schema } from "effect"
import { firstFailureAtJsonPath } from "../shared/schema-failure.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../shared/storable-text.ts"
import { WebhookErrorObject, WebhookEvent } from "./webhook.ts"

/** Decodes a parsed JSON body with `schema`; failure is the 400 error object (`invalid_request`, missing | invalid). */
export const makeWebhookEventDecoder = <I>(schema: Schema.Schema<WebhookEvent, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return (input: unknown): Either.Either<WebhookEvent, WebhookErrorObject> =>
    Either.mapLeft(decode(input), (error) => {
      const first = firstFailureAtJsonPath(error)
      return { type: "invalid_request", code: first.kind, message: first.message, param: first.param }
    })
}

export const decodeWebhookEvent = makeWebhookEventDecoder(WebhookEvent)

/**
 * Parses a raw body and decodes it with `schema` (the receiver route's declared payload,
 * `WebhookEvent`); JSON syntax errors → `invalid_json` (param `$`).
 */
export const makeWebhookBodyParser = <I>(schema: Schema.Schema<WebhookEvent, I, never>) => {
  const decodeEvent = makeWebhookEventDecoder(schema)
  return (rawBody: string | Uint8Array): Either.Either<WebhookEvent, WebhookErrorObject> => {
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
    // The whole payload is kept (jsonb), so all of its text must be storable.
    const unstorable = unstorableTextPath(json)
    if (unstorable !== undefined) {
      return Either.left({
        type: "invalid_request",
        code: "invalid",
        message: `Text ${UNSTORABLE_TEXT_MESSAGE}.`,
        param: unstorable
      })
    }
    return decodeEvent(json)
  }
}

export const parseWebhookBody = makeWebhookBodyParser(WebhookEvent)
