/**
 * Text PostgreSQL cannot keep: neither `text` nor `jsonb` holds U+0000, and `jsonb` refuses an
 * unpaired UTF-16 surrogate (which a JSON escape such as `\ud800` produces). Stored as they are,
 * both fail the statement, so every request body is checked once, right after parsing: such input
 * is a 400 naming the field, never a 500, and the memory stores accept exactly what PostgreSQL does.
 * A number too large for a double is refused the same way: it would be kept as null.
 */
import { Schema } from "effect"
import { firstTextPath } from "./json-text.ts"

// eslint-disable-next-line no-control-regex -- NUL is exactly what it finds
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export const UNSTORABLE_TEXT_MESSAGE =
  "must not contain the NUL character (U+0000), an unpaired UTF-16 surrogate or a number beyond ±1.8e308"

/** Whether storage can keep `text`. */
export const isStorableText = (text: string): boolean => !unstorable.test(text)

/** A string storage can keep: for ids in paths and query strings, which no body check sees. */
export const StorableString = Schema.String.pipe(
  Schema.filter(isStorableText, { message: () => UNSTORABLE_TEXT_MESSAGE })
)

/**
 * The JSONPath of the first string (value or object key) of a parsed JSON value that cannot be
 * stored, or of its first number beyond what a double holds (`1e400` parses as Infinity, which
 * JSON writes back as null), or undefined.
 */
export const unstorableTextPath = (json: unknown): string | undefined =>
  firstTextPath(json, (text) => unstorable.test(text), { number: (value) => !Number.isFinite(value) })
