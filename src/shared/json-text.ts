import { containsCardNumber } from "./card-numbers.ts"
import { toJsonPath } from "./schema-helpers.ts"

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

/** The JSONPath of the first string (value or key) `matches` accepts, or number `options.number` does; iterative. */
export const firstTextPath = (
  json: unknown,
  matches: (text: string) => boolean,
  options: { readonly number?: (value: number) => boolean } = {}
): string | undefined => {
  const stack: Array<Visit> = [{ value: json, key: undefined, parent: undefined }]
  while (stack.length > 0) {
    const visit = stack.pop()!
    const value = visit.value
    if (typeof value === "string") {
      if (matches(value)) return pathOf(visit)
    } else if (typeof value === "number") {
      if (options.number?.(value) === true) return pathOf(visit)
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: visit })
    } else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!
        if (matches(key)) return pathOf(visit, key)
        stack.push({ value: (value as Record<string, unknown>)[key], key, parent: visit })
      }
    }
  }
  return undefined
}

/** The JSONPath of the first value or key holding what reads as a card number (numbers included), if any. */
export const cardNumberPath = (json: unknown): string | undefined =>
  firstTextPath(json, containsCardNumber, { number: (value) => containsCardNumber(String(value)) })
