/**
 * Capability negotiation: the spec's intersection (same name, highest mutual version, orphaned
 * extensions pruned until none is left, single and multiple parents) and the selection of the
 * capabilities relevant to an operation; then properties over generated registries.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  type ActiveCapabilities,
  type CapabilityDeclaration,
  intersectCapabilities,
  type Operation,
  parentsOf,
  responseCapabilities,
  selectForOperation,
  selectForRoot
} from "../../src/ucp/negotiation/intersection.ts"
import type { Registry } from "../../src/ucp/profile/platform-profile.ts"

const CHECKOUT = "dev.ucp.shopping.checkout"
const CART = "dev.ucp.shopping.cart"
const ORDER = "dev.ucp.shopping.order"
const FULFILLMENT = "dev.ucp.shopping.fulfillment"
const DISCOUNT = "dev.ucp.shopping.discount"
const LOYALTY = "com.example.shopping.loyalty"

const V1 = "2026-01-11"
const V2 = "2026-04-08"
const V3 = "2026-06-01"

type Entry = CapabilityDeclaration & { readonly tag?: string }

const at = (version: string, extra: Partial<Entry> = {}): Entry => ({ version, ...extra })

const namesAndVersions = (active: ActiveCapabilities) =>
  Object.fromEntries(Object.values(active).map((c) => [c.name, c.version]))

describe("the intersection", () => {
  it("keeps names both declare at the highest version both list", () => {
    const business: Registry<Entry> = {
      [CHECKOUT]: [at(V1), at(V2), at(V3)],
      [ORDER]: [at(V1)],
      [CART]: [at(V2)]
    }
    const platform: Registry<Entry> = {
      [CHECKOUT]: [at(V2), at(V1)],
      [ORDER]: [at(V2)],
      "dev.ucp.common.identity_linking": [at(V2)]
    }
    expect(namesAndVersions(intersectCapabilities(business, platform))).toEqual({ [CHECKOUT]: V2 })
  })

  it("answers each party's entry at the selected version (the platform's carries its config)", () => {
    const business: Registry<Entry> = { [ORDER]: [at(V1, { tag: "ours-1" }), at(V2, { tag: "ours-2" })] }
    const platform: Registry<Entry> = { [ORDER]: [at(V2, { tag: "theirs-2" }), at(V3, { tag: "theirs-3" })] }
    const active = intersectCapabilities(business, platform)
    expect(active[ORDER]).toEqual({
      name: ORDER,
      version: V2,
      parents: [],
      extension: false,
      business: at(V2, { tag: "ours-2" }),
      platform: at(V2, { tag: "theirs-2" })
    })
  })

  it("an extension whose parent is not in the intersection is pruned; one whose parent is, stays", () => {
    const business: Registry<Entry> = {
      [CHECKOUT]: [at(V2)],
      [FULFILLMENT]: [at(V2, { extends: CHECKOUT })],
      [DISCOUNT]: [at(V2, { extends: CART })]
    }
    const platform: Registry<Entry> = {
      [CHECKOUT]: [at(V2)],
      [FULFILLMENT]: [at(V2, { extends: CHECKOUT })],
      [DISCOUNT]: [at(V2, { extends: CART })],
      [CART]: [at(V2)]
    }
    expect(Object.keys(intersectCapabilities(business, platform)).sort()).toEqual([CHECKOUT, FULFILLMENT])
  })

  it("a parent without a mutual version takes its extensions with it", () => {
    const business: Registry<Entry> = { [CHECKOUT]: [at(V3)], [FULFILLMENT]: [at(V2, { extends: CHECKOUT })] }
    const platform: Registry<Entry> = { [CHECKOUT]: [at(V2)], [FULFILLMENT]: [at(V2, { extends: CHECKOUT })] }
    expect(intersectCapabilities(business, platform)).toEqual({})
  })

  it("pruning repeats along chains of extensions", () => {
    const chain: Registry<Entry> = {
      "com.example.a.root": [at(V2)],
      "com.example.a.one": [at(V2, { extends: "com.example.a.root" })],
      "com.example.a.two": [at(V2, { extends: "com.example.a.one" })],
      "com.example.a.three": [at(V2, { extends: ["com.example.a.two"] })]
    }
    expect(Object.keys(intersectCapabilities(chain, chain))).toHaveLength(4)
    const withoutRoot = { ...chain }
    delete withoutRoot["com.example.a.root"]
    expect(intersectCapabilities(chain, withoutRoot)).toEqual({})
    const withoutOne = { ...chain }
    delete withoutOne["com.example.a.one"]
    expect(Object.keys(intersectCapabilities(withoutOne, chain))).toEqual(["com.example.a.root"])
  })

  it("a multi-parent extension stays while at least one parent does", () => {
    const business: Registry<Entry> = {
      [CHECKOUT]: [at(V2)],
      [CART]: [at(V2)],
      [DISCOUNT]: [at(V2, { extends: [CHECKOUT, CART] })]
    }
    const onlyCart: Registry<Entry> = { [CART]: [at(V2)], [DISCOUNT]: [at(V2, { extends: [CHECKOUT, CART] })] }
    expect(Object.keys(intersectCapabilities(business, onlyCart)).sort()).toEqual([CART, DISCOUNT])
    expect(intersectCapabilities(business, onlyCart)[DISCOUNT]!.parents).toEqual([CHECKOUT, CART])
    const neither: Registry<Entry> = { [DISCOUNT]: [at(V2, { extends: [CHECKOUT, CART] })] }
    expect(intersectCapabilities(business, neither)).toEqual({})
  })

  it("the business's declaration of parents decides", () => {
    const business: Registry<Entry> = { [CART]: [at(V2)], [DISCOUNT]: [at(V2, { extends: CHECKOUT })] }
    const platform: Registry<Entry> = { [CART]: [at(V2)], [DISCOUNT]: [at(V2, { extends: CART })] }
    expect(Object.keys(intersectCapabilities(business, platform))).toEqual([CART])
  })

  it("extensions extending one another in a circle, with no root under them, are dropped", () => {
    const circle: Registry<Entry> = {
      "com.example.x.one": [at(V2, { extends: "com.example.x.two" })],
      "com.example.x.two": [at(V2, { extends: "com.example.x.one" })],
      "com.example.x.self": [at(V2, { extends: "com.example.x.self" })],
      "com.example.x.none": [at(V2, { extends: [] })]
    }
    expect(intersectCapabilities(circle, circle)).toEqual({})
    const rooted = {
      ...circle,
      "com.example.x.root": [at(V2)],
      "com.example.x.two": [at(V2, { extends: ["com.example.x.one", "com.example.x.root"] })]
    }
    expect(Object.keys(intersectCapabilities(rooted, rooted)).sort()).toEqual([
      "com.example.x.one",
      "com.example.x.root",
      "com.example.x.two"
    ])
  })

  it("only own keys count: a name is never found on a registry's prototype", () => {
    const business: Registry<Entry> = { constructor: [at(V2)], toString: [at(V2)], [CHECKOUT]: [at(V2)] }
    expect(Object.keys(intersectCapabilities(business, { [CHECKOUT]: [at(V2)] }))).toEqual([CHECKOUT])
  })
})

describe("the capabilities of a response (by its operation's root)", () => {
  const all: Registry<Entry> = {
    [CHECKOUT]: [at(V2)],
    [CART]: [at(V2)],
    [ORDER]: [at(V2)],
    [FULFILLMENT]: [at(V2, { extends: CHECKOUT })],
    [DISCOUNT]: [at(V2, { extends: [CHECKOUT, CART] })],
    [LOYALTY]: [at(V2, { extends: DISCOUNT })]
  }
  const active = intersectCapabilities(all, all)

  it("checkout: checkout, discount, fulfillment (and an extension of discount); not cart or order", () => {
    expect(Object.keys(selectForOperation(active, "checkout")).sort()).toEqual(
      [CHECKOUT, DISCOUNT, FULFILLMENT, LOYALTY].sort()
    )
  })

  it("cart: cart, discount (and its extension); not checkout, fulfillment or order", () => {
    expect(Object.keys(selectForOperation(active, "cart")).sort()).toEqual([CART, DISCOUNT, LOYALTY].sort())
  })

  it("order: order only", () => {
    expect(Object.keys(selectForOperation(active, "order"))).toEqual([ORDER])
  })

  it("a root that is not active selects nothing", () => {
    const withoutCart = intersectCapabilities(all, { ...all, [CART]: [at(V1)] })
    expect(selectForOperation(withoutCart, "cart")).toEqual({})
    expect(selectForRoot(active, "com.example.none.root")).toEqual({})
  })

  it("as a response declares them: each name with its negotiated version", () => {
    expect(responseCapabilities(selectForOperation(active, "order"))).toEqual({ [ORDER]: [{ version: V2 }] })
  })
})

// ---------------------------------------------------------------------------------------------------
// Properties

const POOL = [CHECKOUT, CART, ORDER, FULFILLMENT, DISCOUNT, LOYALTY, "com.example.x.a", "com.example.x.b"]
const VERSIONS = [V1, V2, V3]

/** Entries whose parents are drawn from `parents` (all of the pool, or only earlier names: no circle). */
const entries = (parents: ReadonlyArray<string>) =>
  fc.array(
    fc.record({
      version: fc.constantFrom(...VERSIONS),
      extends: parents.length === 0
        ? fc.constant(undefined)
        : fc.option(
          fc.oneof(fc.constantFrom(...parents), fc.uniqueArray(fc.constantFrom(...parents), { minLength: 1 })),
          { nil: undefined }
        )
    }).map((entry): Entry => (entry.extends === undefined ? { version: entry.version } : entry)),
    { minLength: 1, maxLength: 3 }
  )

const registry = (acyclic: boolean) =>
  fc.tuple(...POOL.map((_name, i) => fc.option(entries(acyclic ? POOL.slice(0, i) : POOL), { nil: undefined })))
    .map((perName) =>
      Object.fromEntries(
        perName.flatMap((value, i) => (value === undefined ? [] : [[POOL[i]!, value] as const]))
      ) as Registry<Entry>
    )

/** The spec's steps as written: intersect, select versions, prune until nothing changes. */
const specIntersection = (business: Registry<Entry>, platform: Registry<Entry>): Record<string, string> => {
  const active = new Map<string, { version: string; parents: ReadonlyArray<string> | undefined }>()
  for (const [name, ours] of Object.entries(business)) {
    const theirs = Object.hasOwn(platform, name) ? platform[name]! : undefined
    if (theirs === undefined) continue
    const mutual = ours.map((e) => e.version).filter((v) => theirs.some((t) => t.version === v)).sort()
    if (mutual.length === 0) continue
    const version = mutual[mutual.length - 1]!
    const entry = ours.find((e) => e.version === version)!
    active.set(name, { version, parents: entry.extends === undefined ? undefined : parentsOf(entry) })
  }
  for (let removed = true; removed;) {
    removed = false
    for (const [name, { parents }] of active) {
      if (parents !== undefined && !parents.some((parent) => active.has(parent))) {
        active.delete(name)
        removed = true
      }
    }
  }
  return Object.fromEntries([...active].map(([name, { version }]) => [name, version]))
}

const asRegistry = (active: ActiveCapabilities<Entry, Entry>, side: "business" | "platform"): Registry<Entry> =>
  Object.fromEntries(Object.values(active).map((c) => [c.name, [c[side]]]))

describe("properties of the intersection", () => {
  it("the result is in both inputs, at the highest version both list", () => {
    fc.assert(fc.property(registry(false), registry(false), (business, platform) => {
      for (const capability of Object.values(intersectCapabilities(business, platform))) {
        const ours = business[capability.name]!.map((e) => e.version)
        const theirs = platform[capability.name]!.map((e) => e.version)
        expect(ours).toContain(capability.version)
        expect(theirs).toContain(capability.version)
        const mutual = ours.filter((v) => theirs.includes(v))
        expect(mutual.every((v) => v <= capability.version)).toBe(true)
        expect(capability.business.version).toBe(capability.version)
        expect(capability.platform.version).toBe(capability.version)
      }
    }))
  })

  it("no extension is left without a parent in the result", () => {
    fc.assert(fc.property(registry(false), registry(false), (business, platform) => {
      const active = intersectCapabilities(business, platform)
      for (const capability of Object.values(active)) {
        if (capability.extension) expect(capability.parents.some((p) => Object.hasOwn(active, p))).toBe(true)
      }
    }))
  })

  it("is idempotent: negotiating again with the result changes nothing", () => {
    fc.assert(fc.property(registry(false), registry(false), (business, platform) => {
      const once = intersectCapabilities(business, platform)
      const again = intersectCapabilities(asRegistry(once, "business"), asRegistry(once, "platform"))
      expect(namesAndVersions(again)).toEqual(namesAndVersions(once))
      expect(namesAndVersions(intersectCapabilities(asRegistry(once, "business"), platform))).toEqual(
        namesAndVersions(once)
      )
    }))
  })

  it("without circles of extensions it is exactly the spec's repeated pruning", () => {
    fc.assert(fc.property(registry(true), registry(true), (business, platform) => {
      expect(namesAndVersions(intersectCapabilities(business, platform))).toEqual(specIntersection(business, platform))
    }))
  })

  it("a selection is a subset of the active capabilities, holding its root whenever it holds anything", () => {
    fc.assert(fc.property(registry(false), registry(false), fc.constantFrom<Operation>("checkout", "cart", "order"), (
      business,
      platform,
      operation
    ) => {
      const active = intersectCapabilities(business, platform)
      const selected = selectForOperation(active, operation)
      for (const name of Object.keys(selected)) expect(active[name]).toBe(selected[name])
      const root = { checkout: CHECKOUT, cart: CART, order: ORDER }[operation]
      if (Object.keys(selected).length > 0) expect(Object.hasOwn(selected, root)).toBe(true)
    }))
  })
})
