/** The nesting bound on request bodies, checked after parsing: later code recurses (stringify, decode, fingerprint). */
import { toJsonPath } from "./schema-helpers.ts"

/** Arrays and objects nested in one another: `{}` and `[]` are at depth 1, `{"a": [1]}` at depth 2. */
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

/** The JSONPath of the first container nested deeper than `limit`, if any; iterative, so no depth overflows it. */
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
