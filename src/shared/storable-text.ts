/**
 * Text PostgreSQL cannot keep: neither `text` nor `jsonb` holds U+0000, and `jsonb` refuses an
 * unpaired UTF-16 surrogate (which a JSON escape such as `\ud800` produces). Stored as they are,
 * both fail the statement, so every request body is checked once, right after parsing: such input
 * is a 400 naming the field, never a 500, and the memory stores accept exactly what PostgreSQL does.
 */
import { Schema } from "effect"
import { toJsonPath } from "./schema-helpers.ts"

// eslint-disable-next-line no-control-regex -- NUL is exactly what it finds
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export const UNSTORABLE_TEXT_MESSAGE = "must not contain the NUL character (U+0000) or an unpaired UTF-16 surrogate"

/** A string storage can keep: for ids in paths and query strings, which no body check sees. */
export const StorableString = Schema.String.pipe(
  Schema.filter((s) => !unstorable.test(s), { message: () => UNSTORABLE_TEXT_MESSAGE })
)

interface Visit {
  readonly value: unknown
  readonly key: PropertyKey | undefined
  readonly parent: Visit | undefined
}

const pathOf = (visit: Visit | undefined, last?: PropertyKey): string => {
  const path: Array<PropertyKey> = last === undefined ? [] : [last]
  for (let at = visit; at !== undefined && at.key !== undefined; at = at.parent) path.unshift(at.key)
  return toJsonPath(path)
}

/**
 * The JSONPath of the first string (value or object key) of a parsed JSON value that cannot be
 * stored, or undefined. Walks with its own stack and builds a path only for what it reports:
 * nesting depth is bounded only by the body size.
 */
export const unstorableTextPath = (json: unknown): string | undefined => {
  const stack: Array<Visit> = [{ value: json, key: undefined, parent: undefined }]
  while (stack.length > 0) {
    const visit = stack.pop()!
    const value = visit.value
    if (typeof value === "string") {
      if (unstorable.test(value)) return pathOf(visit)
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: visit })
    } else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!
        if (unstorable.test(key)) return pathOf(visit, key)
        stack.push({ value: (value as Record<string, unknown>)[key], key, parent: visit })
      }
    }
  }
  return undefined
}
