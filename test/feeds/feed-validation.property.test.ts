/**
 * `validateFeedProduct` against the official 2026-04-17 `Product` (`official-feed-schema.ts`) on
 * products mutated at random (a field removed, replaced by any JSON value, or a key added, at any
 * depth): it never accepts what the official schema refuses, and refuses what it accepts only for
 * the service's own documented rules (`docs/feeds.md`: ids, distinct variant ids, assigned currencies).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { validateFeedProduct } from "../../src/feeds/wire/acp/feed-validation.ts"
import { isCurrency } from "../../src/shared/iso-codes.ts"
import { everyFieldProduct, mugProduct, tshirtProduct } from "./feed-fixtures.ts"
import { isOfficial } from "./official-feed-schema.ts"

type Path = ReadonlyArray<string | number>

const pathsOf = (value: unknown, path: Path = []): Array<Path> => {
  if (Array.isArray(value)) return [path, ...value.flatMap((item, i) => pathsOf(item, [...path, i]))]
  if (value !== null && typeof value === "object") {
    return [path, ...Object.entries(value).flatMap(([key, item]) => pathsOf(item, [...path, key]))]
  }
  return [path]
}

const at = (value: any, path: Path): any => path.reduce((node, key) => node?.[key], value)

type Mutation =
  | { readonly kind: "remove"; readonly pick: number }
  | { readonly kind: "replace"; readonly pick: number; readonly value: unknown }
  | { readonly kind: "add"; readonly pick: number; readonly key: string; readonly value: unknown }

const mutations: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("replace" as const), pick: fc.nat(), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({
    kind: fc.constant("add" as const),
    pick: fc.nat(),
    key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("id", "title", "price", "url", "extra")),
    value: fc.jsonValue({ maxDepth: 2 })
  })
)

const mutate = (product: unknown, mutation: Mutation): unknown => {
  const copy = structuredClone(product)
  const paths = pathsOf(copy).filter((path) => path.length > 0)
  const path = paths[mutation.pick % paths.length]!
  const parent = at(copy, path.slice(0, -1))
  const last = path[path.length - 1]!
  switch (mutation.kind) {
    case "remove":
      if (Array.isArray(parent)) parent.splice(last as number, 1)
      else delete parent[last]
      break
    case "replace":
      parent[last] = mutation.value
      break
    case "add": {
      const target = at(copy, path)
      if (target !== null && typeof target === "object" && !Array.isArray(target)) target[mutation.key] = mutation.value
      else parent[last] = { [mutation.key]: mutation.value }
    }
  }
  return copy
}

/** The service's rules beyond the official schema, on a value the official schema accepts. */
const breaksOwnRules = (product: any): boolean => {
  const ids = [product.id, ...product.variants.map((variant: any) => variant.id)]
  if (ids.some((id: string) => id.length === 0 || id.length > 255)) return true
  if (new Set(product.variants.map((variant: any) => variant.id)).size !== product.variants.length) return true
  const currencies = product.variants.flatMap((variant: any) =>
    [variant.price, variant.list_price, variant.unit_price].filter((price) => price !== undefined)
      .map((price: any) => price.currency)
  )
  if (currencies.some((code: string) => !isCurrency(code.toLowerCase()))) return true
  return JSON.stringify(product).includes("\\u0000")
}

describe("validateFeedProduct and the official Product", () => {
  it("agree on mutated products, up to the documented rules of our own", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(tshirtProduct(), mugProduct(), everyFieldProduct()),
        fc.array(mutations, { minLength: 1, maxLength: 3 }),
        (product, steps) => {
          const mutated = steps.reduce(mutate, product as unknown)
          const ours = Either.isRight(validateFeedProduct(mutated))
          const official = isOfficial("Product", mutated)
          if (ours) expect(official, JSON.stringify(mutated)).toBe(true)
          if (official && !breaksOwnRules(mutated)) expect(ours, JSON.stringify(mutated)).toBe(true)
        }
      ),
      { numRuns: 1000 }
    )
  })
})
