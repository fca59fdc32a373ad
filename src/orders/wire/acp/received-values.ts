/** Building blocks of the receiver's readings of order events (every version). */
import { Schema } from "effect"

/** A string of at most `max` characters (an empty one included: the receiver keeps what was sent). */
export const boundedText = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/** A value of an open enum (statuses and types the receiver must accept even when it does not know them). */
export const OpenValue = boundedText(64)

export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "WebhookJsonObject",
  description: "an object"
})
