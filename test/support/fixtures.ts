/** Shared fixtures of the domain tests: the demo catalog and a reducer context. */
import { Either, Schema } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { makeCatalogSnapshot } from "../../src/catalog/model/catalog-snapshot.ts"
import { CatalogFile, type CatalogSnapshot } from "../../src/catalog/model/catalog.ts"
import { type Address } from "../../src/catalog/model/fulfillment.ts"
import type { Buyer } from "../../src/checkout/session/schemas.ts"
import type { ReducerContext } from "../../src/checkout/session/session.ts"

export const demoCatalogPath = fileURLToPath(new URL("../../catalog/demo-catalog.json", import.meta.url))

export const demoCatalogJson = (): unknown => JSON.parse(readFileSync(demoCatalogPath, "utf8"))

export const demoCatalogFile = (): CatalogFile => Schema.decodeUnknownSync(CatalogFile)(demoCatalogJson())

export const snapshotOf = (file: CatalogFile): CatalogSnapshot =>
  Either.getOrThrowWith(makeCatalogSnapshot(file), (message) => new Error(message))

export const demoCatalog: CatalogSnapshot = snapshotOf(demoCatalogFile())

/** The demo catalog with one product's title replaced (markup, for the escaping tests). */
export const demoCatalogTitling = (productId: string, title: string): CatalogSnapshot => {
  const file = demoCatalogFile()
  return snapshotOf({
    ...file,
    products: file.products.map((product) => product.id === productId ? { ...product, title } : product)
  })
}

/** Friday 2026-01-30, noon UTC. */
export const NOW = Date.parse("2026-01-30T12:00:00.000Z")
export const TTL_SECONDS = 3600

export const stockOf = (catalog: CatalogSnapshot): ReadonlyMap<string, number> =>
  new Map([...catalog.products.values()].map((product) => [product.id, product.stock]))

export const context = (overrides: Partial<ReducerContext> = {}): ReducerContext => ({
  catalog: demoCatalog,
  now: NOW,
  sessionTtlSeconds: TTL_SECONDS,
  available: stockOf(demoCatalog),
  ...overrides
})

export const address = (country: string, state: string): Address => ({
  name: "Ada Lovelace",
  line_one: "1 Main Street",
  city: "Somewhere",
  state,
  country,
  postal_code: "10001"
})

export const NY = address("us", "NY")
export const CA = address("US", "CA")
export const TX = address("US", "TX")
export const GB = address("GB", "London")
export const JP = address("JP", "Tokyo")

export const buyer: Buyer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }
