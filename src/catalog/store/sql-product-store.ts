/**
 * `ProductStore` over SQL (migration 0026). A write locks its product row, then the stock rows it sets
 * (through `checkout_lock_stock`, shards before stock rows as every checkout does), then bumps
 * `catalog_version` last: checkouts never lock product rows or the version row, so no cycle.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { STOCK_SHARDS } from "../../db/functions/stock-shards.ts"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso, jsonValue } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import type { StorageError } from "../../db/storage-error.ts"
import {
  patchedVariant,
  type ProductInput,
  type StoredProduct,
  storedProduct,
  type StoredVariant,
  type VariantPatch
} from "../model/product.ts"
import {
  ProductConflict,
  type ProductListFilter,
  ProductNotFound,
  ProductStore,
  type ProductStoreService,
  ProductVersionMismatch,
  type ProductWithStock,
  StockBelowReserved,
  StockChanged
} from "../product-store.ts"

interface ProductRow {
  readonly id: string
  readonly title: string
  readonly details: unknown
  readonly version: number
  readonly archived_ms: number | null
  readonly created_ms: number
  readonly updated_ms: number
}

interface VariantRow {
  readonly id: string
  readonly product_id: string
  readonly title: string | null
  readonly unit_amount: number
  readonly list_amount: number | null
  readonly availability: string
  readonly tax_category: string | null
  readonly kind: string
  readonly details: unknown
  readonly archived_ms: number | null
}

const productColumns = `id, title, details, version,
  (extract(epoch FROM archived_at) * 1000)::float8 AS archived_ms,
  (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
  (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms`

const variantColumns = `id, product_id, title, unit_amount, list_amount, availability, tax_category, kind, details,
  (extract(epoch FROM archived_at) * 1000)::float8 AS archived_ms`

const orUndefined = <A>(value: A | null): A | undefined => (value === null ? undefined : value)

const variantOf = (row: VariantRow): StoredVariant => {
  const details = jsonValue(row.details) as Pick<StoredVariant, "option_values" | "barcodes">
  return {
    id: row.id,
    title: orUndefined(row.title),
    unit_amount: Number(row.unit_amount),
    list_amount: row.list_amount === null ? undefined : Number(row.list_amount),
    availability: row.availability as StoredVariant["availability"],
    tax_category: orUndefined(row.tax_category),
    kind: row.kind as StoredVariant["kind"],
    option_values: details.option_values ?? [],
    barcodes: details.barcodes ?? [],
    archivedAt: row.archived_ms === null ? undefined : Number(row.archived_ms)
  }
}

const productsOf = (rows: ReadonlyArray<ProductRow>, variants: ReadonlyArray<VariantRow>) => {
  const byProduct = new Map<string, Array<StoredVariant>>()
  for (const row of variants) {
    const list = byProduct.get(row.product_id) ?? []
    list.push(variantOf(row))
    byProduct.set(row.product_id, list)
  }
  return rows.map((row): StoredProduct => ({
    id: row.id,
    title: row.title,
    details: jsonValue(row.details) as StoredProduct["details"],
    variants: byProduct.get(row.id) ?? [],
    version: Number(row.version),
    archivedAt: row.archived_ms === null ? undefined : Number(row.archived_ms),
    createdAt: Number(row.created_ms),
    updatedAt: Number(row.updated_ms)
  }))
}

const stockOf = (input: ProductInput) =>
  input.variants.map((variant) => ({ id: variant.id, stock: variant.stock ?? 0 }))

export const make = Effect.map(SqlClient.SqlClient, (sql): ProductStoreService => {
  const run = statementRunner(sql)
  const transaction = sqlTransaction(sql)

  const loadVariants = (ids: ReadonlyArray<string>) =>
    ids.length === 0 ? Effect.succeed([]) : run(sql<VariantRow>`
      SELECT ${sql.literal(variantColumns)} FROM product_variants
      WHERE product_id = ANY (${ids}::text[]) ORDER BY product_id, position`)

  const withStock = Effect.fnUntraced(function*(products: ReadonlyArray<StoredProduct>) {
    const ids = products.flatMap((product) => product.variants.map((variant) => variant.id))
    const rows = ids.length === 0 ? [] : yield* run(sql<{ product_id: string; on_hand: number; reserved: number }>`
        SELECT product_id, on_hand, reserved FROM stock_totals WHERE product_id = ANY (${ids}::text[])`)
    const levels = new Map(
      rows.map((row) => [row.product_id, { onHand: Number(row.on_hand), reserved: Number(row.reserved) }])
    )
    return products.map((product): ProductWithStock => ({
      product,
      stock: new Map(
        product.variants.map((variant) => [variant.id, levels.get(variant.id) ?? { onHand: 0, reserved: 0 }])
      )
    }))
  })

  const loadProducts = (rows: ReadonlyArray<ProductRow>) =>
    Effect.map(loadVariants(rows.map((row) => row.id)), (variants) => productsOf(rows, variants))

  const readOne = (id: string, lock: boolean) =>
    Effect.flatMap(
      run(sql<ProductRow>`
        SELECT ${sql.literal(productColumns)} FROM products WHERE id = ${id} ${sql.literal(lock ? "FOR UPDATE" : "")}`),
      (rows) => Effect.map(loadProducts(rows), (products) => Option.fromNullable(products[0]))
    )

  const bumpVersion = run(sql`
    INSERT INTO catalog_version (id, version) VALUES (1, 1)
    ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1`)

  const writeProductRow = (product: StoredProduct, insert: boolean) =>
    insert
      ? run(sql<{ id: string }>`
        INSERT INTO products (id, title, details, version, archived_at, created_at, updated_at)
        VALUES (${product.id}, ${product.title}, ${JSON.stringify(product.details)}::jsonb, ${product.version},
                NULL, ${iso(product.createdAt)}::timestamptz, ${iso(product.updatedAt)}::timestamptz)
        ON CONFLICT (id) DO NOTHING RETURNING id`)
      : run(sql<{ id: string }>`
        UPDATE products SET title = ${product.title}, details = ${JSON.stringify(product.details)}::jsonb,
          version = ${product.version}, archived_at = ${
        product.archivedAt === undefined ? null : iso(product.archivedAt)
      }::timestamptz, updated_at = ${iso(product.updatedAt)}::timestamptz
        WHERE id = ${product.id} RETURNING id`)

  /** Fails when a variant id is another product's. */
  const writeVariants = (product: StoredProduct) =>
    Effect.forEach(product.variants, (variant, position) =>
      Effect.flatMap(
        run(sql<{ id: string }>`
          INSERT INTO product_variants (id, product_id, position, title, unit_amount, list_amount, availability,
                                        tax_category, kind, details, archived_at)
          VALUES (${variant.id}, ${product.id}, ${position}, ${variant.title ?? null}, ${variant.unit_amount},
                  ${variant.list_amount ?? null}, ${variant.availability}, ${variant.tax_category ?? null},
                  ${variant.kind}, ${
          JSON.stringify({ option_values: variant.option_values, barcodes: variant.barcodes })
        }::jsonb,
                  ${variant.archivedAt === undefined ? null : iso(variant.archivedAt)}::timestamptz)
          ON CONFLICT (id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
            unit_amount = EXCLUDED.unit_amount, list_amount = EXCLUDED.list_amount,
            availability = EXCLUDED.availability, tax_category = EXCLUDED.tax_category, kind = EXCLUDED.kind,
            details = EXCLUDED.details, archived_at = EXCLUDED.archived_at
          WHERE product_variants.product_id = EXCLUDED.product_id
          RETURNING id`),
        (rows) =>
          rows.length === 1
            ? Effect.void
            : Effect.fail(new ProductConflict({ reason: "variant_id_taken", id: variant.id }))
      ), { discard: true })

  /** New stock rows (and their shards) for variants without one; an existing row keeps its level. */
  const seedStock = (rows: ReadonlyArray<{ readonly id: string; readonly stock: number }>) =>
    rows.length === 0 ? Effect.void : run(sql`
      WITH inserted AS (
        INSERT INTO stock (product_id, on_hand, reserved)
        SELECT v.product_id, v.on_hand,
               COALESCE((SELECT SUM(r.quantity) FROM reservations r WHERE r.product_id = v.product_id), 0)
        FROM unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.stock)}::int[])
          AS v (product_id, on_hand)
        ORDER BY v.product_id
        ON CONFLICT (product_id) DO NOTHING
        RETURNING product_id
      )
      INSERT INTO stock_shards (product_id, shard, free)
      SELECT i.product_id, n.shard, 0
      FROM inserted i CROSS JOIN generate_series(0, ${STOCK_SHARDS - 1}) AS n (shard)
      ON CONFLICT (product_id, shard) DO NOTHING`).pipe(Effect.asVoid)

  const fresh = (id: string) =>
    Effect.flatMap(readOne(id, false), (found) =>
      Option.isNone(found)
        ? Effect.die(new Error(`product ${id} vanished in its own transaction`))
        : Effect.map(withStock([found.value]), (stocked) => stocked[0]!))

  const locked = (
    productId: string,
    ifVersion: number | undefined,
    variantId?: string
  ): Effect.Effect<StoredProduct, ProductNotFound | ProductVersionMismatch | StorageError> =>
    Effect.flatMap(readOne(productId, true), (found): Effect.Effect<
      StoredProduct,
      ProductNotFound | ProductVersionMismatch
    > => {
      if (Option.isNone(found)) return Effect.fail(new ProductNotFound({ productId }))
      const product = found.value
      if (ifVersion !== undefined && product.version !== ifVersion) {
        return Effect.fail(new ProductVersionMismatch({ productId, current: product.version }))
      }
      if (variantId !== undefined && !product.variants.some((variant) => variant.id === variantId)) {
        return Effect.fail(new ProductNotFound({ productId, variantId }))
      }
      return Effect.succeed(product)
    })

  const insertProduct = Effect.fnUntraced(function*(input: ProductInput, now: number) {
    const product = storedProduct(input, now)
    const inserted = yield* writeProductRow(product, true)
    if (inserted.length === 0) return yield* new ProductConflict({ reason: "product_exists", id: input.id })
    yield* writeVariants(product)
    yield* seedStock(stockOf(input))
    return product
  })

  const setStock = Effect.fnUntraced(function*(
    variantId: string,
    onHand: number,
    expected: number | undefined,
    now: number
  ) {
    yield* seedStock([{ id: variantId, stock: 0 }])
    // Takes the shards' free units back to the stock row and locks it: `reserved` is then exactly the holds.
    yield* run(sql`SELECT 1 FROM checkout_lock_stock(${[variantId]}::text[], '', ${iso(now)}::timestamptz)`)
    const [row] = yield* run(
      sql<{ on_hand: number; reserved: number }>`SELECT on_hand, reserved FROM stock WHERE product_id = ${variantId}`
    )
    const reserved = Number(row?.reserved ?? 0)
    // Under the stock row's lock: a sale cannot change it between this check and the write.
    const current = Number(row?.on_hand ?? 0)
    if (expected !== undefined && expected !== current) {
      return yield* new StockChanged({ variantId, onHand: current })
    }
    // A completion consumes what its session holds: fewer on hand could fail it after its charge.
    if (onHand < reserved) return yield* new StockBelowReserved({ variantId, reserved })
    yield* run(sql`UPDATE stock SET on_hand = ${onHand} WHERE product_id = ${variantId}`)
  })

  const written = <E>(effect: Effect.Effect<StoredProduct, E>): Effect.Effect<ProductWithStock, E | StorageError> =>
    transaction(Effect.flatMap(effect, (product) => Effect.zipRight(bumpVersion, fresh(product.id))))

  const readAll = Effect.fnUntraced(function*() {
    // The version first: what is read after it is at least as new.
    const [row] = yield* run(sql<{ version: string | number }>`SELECT version FROM catalog_version WHERE id = 1`)
    const rows = yield* run(sql<ProductRow>`SELECT ${sql.literal(productColumns)} FROM products ORDER BY id`)
    const variants = yield* run(sql<VariantRow>`
      SELECT ${sql.literal(variantColumns)} FROM product_variants ORDER BY product_id, position`)
    return { version: Number(row?.version ?? 0), products: productsOf(rows, variants) }
  })

  const importMissing = Effect.fnUntraced(function*(missing: ReadonlyArray<ProductInput>, now: number) {
    let imported = 0
    for (const input of missing) {
      // Another process may import the same seed at once: its rows are the same.
      const done = yield* Effect.either(insertProduct(input, now))
      if (done._tag === "Right") imported++
      else if (done.left._tag !== "ProductConflict") return yield* done.left
    }
    if (imported > 0) yield* bumpVersion
    return imported
  })

  const importSeed = Effect.fnUntraced(function*(inputs: ReadonlyArray<ProductInput>, now: number) {
    if (inputs.length === 0) return 0
    const productIds = inputs.map((input) => input.id)
    const variantIds = inputs.flatMap((input) => input.variants.map((variant) => variant.id))
    const known = yield* run(sql<{ id: string }>`
      SELECT id FROM products WHERE id = ANY (${productIds}::text[])
      UNION ALL SELECT id FROM product_variants WHERE id = ANY (${variantIds}::text[])`)
    const taken = new Set(known.map((row) => row.id))
    const missing = inputs.filter((input) =>
      !taken.has(input.id) && input.variants.every((variant) => !taken.has(variant.id))
    )
    return missing.length === 0 ? 0 : yield* transaction(importMissing(missing, now))
  })

  const list = Effect.fnUntraced(function*(filter: ProductListFilter) {
    const q = filter.q?.trim()
    const pattern = q === undefined || q === "" ? null : `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    const rows = yield* run(sql<ProductRow>`
      SELECT ${sql.literal(productColumns)} FROM products p
      WHERE (${filter.after ?? null}::text IS NULL OR p.id > ${filter.after ?? null}::text)
        AND (${filter.archived === true} OR p.archived_at IS NULL)
        AND (${pattern}::text IS NULL OR p.title ILIKE ${pattern}::text OR p.id ILIKE ${pattern}::text
             OR (p.details ->> 'description') ILIKE ${pattern}::text
             OR EXISTS (SELECT FROM product_variants v WHERE v.product_id = p.id AND v.id ILIKE ${pattern}::text))
        AND (${filter.availability ?? null}::text IS NULL OR EXISTS (
             SELECT FROM product_variants v WHERE v.product_id = p.id AND v.archived_at IS NULL
               AND v.availability = ${filter.availability ?? null}::text))
      ORDER BY p.id COLLATE "C" LIMIT ${filter.limit}`)
    return yield* withStock(yield* loadProducts(rows))
  })

  const replaceLocked = Effect.fnUntraced(
    function*(input: ProductInput, ifVersion: number | undefined, now: number) {
      const previous = yield* locked(input.id, ifVersion)
      const product = storedProduct(input, now, previous)
      yield* writeProductRow(product, false)
      yield* writeVariants(product)
      yield* seedStock(stockOf(input))
      return product
    }
  )

  const patchLocked = Effect.fnUntraced(function*(
    productId: string,
    variantId: string,
    patch: VariantPatch,
    ifVersion: number | undefined,
    now: number
  ) {
    const previous = yield* locked(productId, ifVersion, variantId)
    const product: StoredProduct = {
      ...previous,
      variants: previous.variants.map((variant) => variant.id === variantId ? patchedVariant(variant, patch) : variant),
      version: previous.version + 1,
      updatedAt: now
    }
    yield* writeProductRow(product, false)
    // Its own variants only: never another product's id.
    yield* Effect.catchTag(writeVariants(product), "ProductConflict", Effect.die)
    if (patch.stock !== undefined) yield* setStock(variantId, patch.stock, patch.expected_stock, now)
    return product
  })

  const archiveLocked = Effect.fnUntraced(function*(productId: string, ifVersion: number | undefined, now: number) {
    const previous = yield* locked(productId, ifVersion)
    if (previous.archivedAt !== undefined) return previous
    const product: StoredProduct = { ...previous, archivedAt: now, version: previous.version + 1, updatedAt: now }
    yield* writeProductRow(product, false)
    return product
  })

  return {
    transaction,
    catalogVersion: Effect.map(
      run(sql<{ version: string | number }>`SELECT version FROM catalog_version WHERE id = 1`),
      (rows) => Number(rows[0]?.version ?? 0)
    ),
    all: Effect.suspend(readAll),
    importSeed,
    list,
    get: (id) =>
      Effect.flatMap(readOne(id, false), (found) =>
        Option.isNone(found)
          ? Effect.succeed(Option.none())
          : Effect.map(withStock([found.value]), (stocked) => Option.some(stocked[0]!))),
    create: (input, now) => written(insertProduct(input, now)),
    replace: (input, ifVersion, now) => written(replaceLocked(input, ifVersion, now)),
    patchVariant: (productId, variantId, patch, ifVersion, now) =>
      written(patchLocked(productId, variantId, patch, ifVersion, now)),
    archive: (productId, ifVersion, now) => written(archiveLocked(productId, ifVersion, now))
  }
})

export const SqlProductStore: Layer.Layer<ProductStore, never, SqlClient.SqlClient> = Layer.effect(
  ProductStore,
  make
)
