/**
 * The nesting bound on every JSON request body. Parsing is iterative, but most code that walks a
 * parsed value afterwards is recursive (`JSON.stringify` when a body is stored, schema decoding,
 * `structuredClone`, canonical JSON for fingerprints): a value nested a few thousand levels deep
 * overflows the stack there. Every body is checked right after parsing, so the code after it only
 * ever sees values at most `MAX_JSON_DEPTH` levels deep, far inside every stack.
 */
import { toJsonPath } from "./schema-helpers.ts"

/**
 * How many arrays and objects may enclose one another in a request body: `{}` and `[]` are at
 * depth 1, `{"a": [1]}` at depth 2. No version of any schema this service reads comes near it.
 */
export const MAX_JSON_DEPTH = 64

export const TOO_DEEP_MESSAGE = `JSON must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`

interface Container {
  readonly value: object
  readonly key: PropertyKey | undefined
  readonly parent: Container | undefined
  readonly depth: number
}

const pathOf = (container: Container): string => {
  const path: Array<PropertyKey> = []
  for (let at: Container | undefined = container; at?.key !== undefined; at = at.parent) path.unshift(at.key)
  return toJsonPath(path)
}

/**
 * The JSONPath of the first array or object (in document order) nested deeper than `limit`
 * levels in a parsed JSON value, or undefined when there is none. Walks with its own stack, never
 * below `limit + 1` levels, so it cannot overflow however deep the value is.
 */
export const jsonDepthProblem = (json: unknown, limit: number = MAX_JSON_DEPTH): string | undefined => {
  if (typeof json !== "object" || json === null) return undefined
  const stack: Array<Container> = [{ value: json, key: undefined, parent: undefined, depth: 1 }]
  while (stack.length > 0) {
    const container = stack.pop()!
    if (container.depth > limit) return pathOf(container)
    const push = (child: unknown, key: PropertyKey) => {
      if (typeof child === "object" && child !== null) {
        stack.push({ value: child, key, parent: container, depth: container.depth + 1 })
      }
    }
    const value = container.value
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) push(value[i], i)
    } else {
      const keys = Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) push((value as Record<string, unknown>)[keys[i]!], keys[i]!)
    }
  }
  return undefined
}
