/**
 * The `ProductStore` contract, one body run on memory, SQL on embedded PGlite and SQL on PostgreSQL
 * (when TEST_DATABASE_URL is set): the seed imported once, the catalog version bumped by every write,
 * rewrites archiving what they leave out, pages by id, conflicts and stale versions refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { ProductInput } from "../../src/catalog/model/product.ts"
import { ProductStore } from "../../src/catalog/product-store.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryProductStore } from "../doubles/memory-product-store.ts"
import { storesUnderTest } from "../support/store-under-test.ts"

const product = (id: string, variants: ReadonlyArray<string>, title = `Product ${id}`): ProductInput => ({
  id,
  title,
  variants: variants.map((variant, i) => ({ id: variant, unit_amount: 100 * (i + 1), stock: 3 }))
})

const T0 = Date.parse("2026-06-01T00:00:00Z")

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`ProductStore on ${store.name}`, () => {
    store.register()
    const run = <A, E>(effect: Effect.Effect<A, E, ProductStore>) =>
      Effect.flatMap(store.freshStores, (stores) =>
        Effect.provide(
          effect,
          (stores.productStore ?? MemoryProductStore).pipe(Layer.provide(freshMemoryDatabase), Layer.orDie)
        )) as Effect.Effect<A, E, never>

    it.effect("the seed is imported once; a product with a taken variant id is left out", () =>
      run(Effect.gen(function*() {
        const products = yield* ProductStore
        const seed = [product("a", ["a"]), product("b", ["b1", "b2"])]
        expect(yield* products.importSeed(seed, T0)).toBe(2)
        const version = yield* products.catalogVersion
        expect(yield* products.importSeed([...seed, product("c", ["b1"])], T0)).toBe(0)
        expect(yield* products.catalogVersion).toBe(version)
        const all = yield* products.all
        expect(all.version).toBe(version)
        expect(all.products.map((p) => [p.id, p.variants.map((v) => v.id)])).toEqual([["a", ["a"]], ["b", [
          "b1",
          "b2"
        ]]])
        const b = Option.getOrThrow(yield* products.get("b"))
        expect([...b.stock.values()]).toEqual([{ onHand: 3, reserved: 0 }, { onHand: 3, reserved: 0 }])
      })))

    it.effect("writes bump the version; a rewrite archives the variants it leaves out; archive is idempotent", () =>
      run(Effect.gen(function*() {
        const products = yield* ProductStore
        const start = yield* products.catalogVersion
        const created = yield* products.create(product("p", ["p1", "p2"]), T0)
        expect(created.product.version).toBe(1)
        expect(yield* products.catalogVersion).toBeGreaterThan(start)
        const replaced = yield* products.replace(product("p", ["p1", "p3"], "New"), 1, T0 + 1)
        expect(replaced.product.version).toBe(2)
        expect(replaced.product.title).toBe("New")
        expect(replaced.product.variants.map((v) => [v.id, v.archivedAt !== undefined])).toEqual([
          ["p1", false],
          ["p3", false],
          ["p2", true]
        ])
        const stale = yield* Effect.flip(products.replace(product("p", ["p1"]), 1, T0 + 2))
        expect(stale._tag).toBe("ProductVersionMismatch")
        const patched = yield* products.patchVariant("p", "p3", { unit_amount: 5, stock: 9 }, 2, T0 + 3)
        expect(patched.product.variants.find((v) => v.id === "p3")?.unit_amount).toBe(5)
        expect(patched.stock.get("p3")).toEqual({ onHand: 9, reserved: 0 })
        // Not the stock expected: nothing of the patch is written.
        const moved = yield* Effect.flip(
          products.patchVariant("p", "p3", { unit_amount: 6, stock: 1, expected_stock: 8 }, undefined, T0 + 3)
        )
        expect(moved).toMatchObject({ _tag: "StockChanged", variantId: "p3", onHand: 9 })
        const kept = Option.getOrThrow(yield* products.get("p"))
        expect(kept.product.variants.find((v) => v.id === "p3")?.unit_amount).toBe(5)
        expect(kept.stock.get("p3")).toEqual({ onHand: 9, reserved: 0 })
        const archived = yield* products.archive("p", undefined, T0 + 4)
        expect(archived.product.archivedAt).toBe(T0 + 4)
        const again = yield* products.archive("p", undefined, T0 + 5)
        expect(again.product.archivedAt).toBe(T0 + 4)
        expect(again.product.version).toBe(archived.product.version)
      })))

    it.effect("conflicts: a taken product id, another product's variant id; unknown ids", () =>
      run(Effect.gen(function*() {
        const products = yield* ProductStore
        yield* products.create(product("x", ["x1"]), T0)
        expect(yield* Effect.flip(products.create(product("x", ["x9"]), T0))).toMatchObject({
          reason: "product_exists"
        })
        const taken = yield* Effect.flip(products.create(product("y", ["y1", "x1"]), T0))
        expect(taken).toMatchObject({ _tag: "ProductConflict", reason: "variant_id_taken", id: "x1" })
        expect(Option.isNone(yield* products.get("y"))).toBe(true)
        const missing = yield* Effect.flip(products.patchVariant("x", "nope", { unit_amount: 1 }, undefined, T0))
        expect(missing._tag).toBe("ProductNotFound")
        expect((yield* Effect.flip(products.archive("nope", undefined, T0)))._tag).toBe("ProductNotFound")
      })))

    it.effect("lists by id after a cursor, searching and filtering, archived only when asked", () =>
      run(Effect.gen(function*() {
        const products = yield* ProductStore
        for (const id of ["d", "b", "c", "a"]) yield* products.create(product(id, [`${id}1`], `Thing ${id}`), T0)
        yield* products.patchVariant("c", "c1", { availability: "out_of_stock" }, undefined, T0)
        yield* products.archive("d", undefined, T0)
        const ids = (found: ReadonlyArray<{ readonly product: { readonly id: string } }>) =>
          found.map((f) => f.product.id)
        expect(ids(yield* products.list({ limit: 2 }))).toEqual(["a", "b"])
        expect(ids(yield* products.list({ limit: 2, after: "b" }))).toEqual(["c"])
        expect(ids(yield* products.list({ limit: 10, archived: true }))).toEqual(["a", "b", "c", "d"])
        expect(ids(yield* products.list({ limit: 10, q: "THING B" }))).toEqual(["b"])
        expect(ids(yield* products.list({ limit: 10, q: "c1" }))).toEqual(["c"])
        expect(ids(yield* products.list({ limit: 10, q: "%" }))).toEqual([])
        expect(ids(yield* products.list({ limit: 10, availability: "out_of_stock" }))).toEqual(["c"])
      })))
  })
}
