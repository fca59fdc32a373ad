/** Text PostgreSQL cannot keep (U+0000; an unpaired surrogate in `jsonb`): refused with a 400 rather than a 500. */
import { Schema } from "effect"
import { firstTextPath } from "./json-text.ts"

// eslint-disable-next-line no-control-regex -- NUL is exactly what it finds
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export const UNSTORABLE_TEXT_MESSAGE =
  "must not contain the NUL character (U+0000), an unpaired UTF-16 surrogate or a number beyond ±1.8e308"

export const isStorableText = (text: string): boolean => !unstorable.test(text)

/** A string storage can keep: for ids in paths and query strings, which no body check sees. */
export const StorableString = Schema.String.pipe(
  Schema.filter(isStorableText, { message: () => UNSTORABLE_TEXT_MESSAGE })
)

/** The JSONPath of the first unstorable string or key, or number beyond a double (`1e400` would be kept as null). */
export const unstorableTextPath = (json: unknown): string | undefined =>
  firstTextPath(json, (text) => unstorable.test(text), { number: (value) => !Number.isFinite(value) })
