/**
 * `FeedStore` over PostgreSQL (`feeds`, `feed_products`; migration 0030). An upsert holds its feed's row
 * lock for its transaction, so concurrent upserts of one feed apply one after the other and the product
 * limit is counted on a settled set.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso, jsonValue, millis } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StorageError } from "../../db/storage-error.ts"
import {
  type Feed,
  type FeedProductRecord,
  FeedStore,
  type FeedStoreService,
  type UpsertOutcome
} from "../feed-store.ts"

interface FeedRow {
  readonly id: string
  readonly owner_key_id: string
  readonly target_country: string | null
  readonly updated_ms: number | string
}

const toFeed = (row: FeedRow): Feed => ({
  id: row.id,
  ownerKeyId: row.owner_key_id,
  targetCountry: row.target_country ?? undefined,
  updatedAt: millis(row.updated_ms)
})

const parse = <A>(f: () => A) =>
  Effect.try({ try: f, catch: (cause) => new StorageError({ reason: "failure", cause }) })

export const make: Effect.Effect<FeedStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)
  const transaction: FeedStoreService["transaction"] = sqlTransaction(sql)
  const feedColumns = sql.literal(
    "id, owner_key_id, target_country, (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms"
  )

  const upsertSteps = Effect.fnUntraced(function*(
    feedId: string,
    products: ReadonlyArray<FeedProductRecord>,
    now: number,
    maxProducts: number
  ) {
    const locked = yield* run(sql<{ id: string }>`SELECT id FROM feeds WHERE id = ${feedId} FOR UPDATE`)
    if (locked.length === 0) return { _tag: "FeedNotFound" } satisfies UpsertOutcome
    const ids = products.map((product) => product.productId)
    const others = yield* run(sql<{ n: number | string }>`
        SELECT count(*)::int AS n FROM feed_products
        WHERE feed_id = ${feedId} AND product_id <> ALL (${ids}::text[])`)
    if (Number(others[0]?.n ?? 0) + ids.length > maxProducts) {
      return { _tag: "TooManyProducts", maxProducts } satisfies UpsertOutcome
    }
    // Parsed JSON within the depth bound (`FeedProductRecord.product`): stringify cannot throw on it.
    const texts = products.map((product) => JSON.stringify(product.product))
    yield* run(sql`
        INSERT INTO feed_products (feed_id, product_id, product, updated_at)
        SELECT ${feedId}, u.product_id, u.product::json, ${iso(now)}::timestamptz
        FROM unnest(${ids}::text[], ${texts}::text[]) WITH ORDINALITY AS u (product_id, product, n)
        ORDER BY u.n
        ON CONFLICT (feed_id, product_id) DO UPDATE
        SET product = EXCLUDED.product, updated_at = EXCLUDED.updated_at`)
    const updated = yield* run(sql<FeedRow>`
        UPDATE feeds SET updated_at = GREATEST(updated_at, ${iso(now)}::timestamptz)
        WHERE id = ${feedId}
        RETURNING ${feedColumns}`)
    return { _tag: "Upserted", feed: toFeed(updated[0]!) } satisfies UpsertOutcome
  })
  const upsertProducts: FeedStoreService["upsertProducts"] = (feedId, products, now, maxProducts) =>
    transaction(upsertSteps(feedId, products, now, maxProducts))

  return FeedStore.of({
    transaction,
    createFeed: (feed) =>
      run(sql`
        INSERT INTO feeds (id, owner_key_id, target_country, created_at, updated_at)
        VALUES (${feed.id}, ${feed.ownerKeyId}, ${feed.targetCountry ?? null},
                ${iso(feed.updatedAt)}::timestamptz, ${iso(feed.updatedAt)}::timestamptz)`).pipe(Effect.asVoid),
    getFeed: (id) =>
      run(sql<FeedRow>`SELECT ${feedColumns} FROM feeds WHERE id = ${id}`).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toFeed))
      ),
    listProducts: (feedId) =>
      run(sql<{ product: unknown }>`
        SELECT product FROM feed_products WHERE feed_id = ${feedId} ORDER BY position`).pipe(
        Effect.flatMap((rows) => parse(() => rows.map((row) => jsonValue(row.product))))
      ),
    upsertProducts
  })
})

export const SqlFeedStore: Layer.Layer<FeedStore, never, SqlClient.SqlClient> = Layer.effect(FeedStore, make)
