/**
 * `FeedPublicationStore` over PostgreSQL (`feed_publications`, `feed_push_states`; migration 0031). A
 * claim is one conditional statement per call: a row another pusher holds is skipped, so two
 * processes never push one product at once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { iso } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import {
  FeedPublicationStore,
  type FeedPublicationStoreService,
  type Publication,
  type PushState
} from "../feed-publication-store.ts"

interface StateRow {
  readonly product_id: string
  readonly pushed_hash: string | null
  readonly pushed_ms: number | string | null
  readonly attempts: number | string
  readonly next_ms: number | string | null
  readonly last_error: string | null
  readonly dead_ms: number | string | null
}

const ms = (value: number | string | null): number | undefined => (value === null ? undefined : Number(value))

const toState = (row: StateRow): PushState => ({
  productId: row.product_id,
  pushedHash: row.pushed_hash ?? undefined,
  pushedAt: ms(row.pushed_ms),
  attempts: Number(row.attempts),
  nextAttemptAt: ms(row.next_ms),
  lastError: row.last_error ?? undefined,
  deadAt: ms(row.dead_ms)
})

const epoch = (column: string, as: string) => `(extract(epoch FROM ${column}) * 1000)::float8 AS ${as}`

export const make = Effect.map(SqlClient.SqlClient, (sql): FeedPublicationStoreService => {
  const run = statementRunner(sql)
  const stateColumns = sql.literal(
    [
      "product_id",
      "pushed_hash",
      epoch("pushed_at", "pushed_ms"),
      "attempts",
      epoch("next_attempt_at", "next_ms"),
      "last_error",
      epoch("dead_at", "dead_ms")
    ].join(", ")
  )
  return {
    publication: (apiUrl) =>
      Effect.map(
        run(sql<{ feed_id: string; target_country: string | null; created_ms: number | string }>`
          SELECT feed_id, target_country, ${sql.literal(epoch("created_at", "created_ms"))}
          FROM feed_publications WHERE api_url = ${apiUrl} AND feed_id IS NOT NULL`),
        (rows) =>
          Option.map(Option.fromNullable(rows[0]), (row): Publication => ({
            apiUrl,
            feedId: row.feed_id,
            targetCountry: row.target_country ?? undefined,
            createdAt: Number(row.created_ms)
          }))
      ),
    claimCreation: (apiUrl, now, leaseMs) =>
      Effect.map(
        run(sql<{ api_url: string }>`
          INSERT INTO feed_publications (api_url, claimed_at) VALUES (${apiUrl}, ${iso(now)}::timestamptz)
          ON CONFLICT (api_url) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
          WHERE feed_publications.feed_id IS NULL
            AND feed_publications.claimed_at <= ${iso(now - leaseMs)}::timestamptz
          RETURNING api_url`),
        (rows) => rows.length === 1
      ),
    savePublication: (publication) =>
      Effect.asVoid(run(sql`
        INSERT INTO feed_publications (api_url, feed_id, target_country, claimed_at, created_at)
        VALUES (${publication.apiUrl}, ${publication.feedId}, ${publication.targetCountry ?? null},
                ${iso(publication.createdAt)}::timestamptz, ${iso(publication.createdAt)}::timestamptz)
        ON CONFLICT (api_url) DO UPDATE SET feed_id = EXCLUDED.feed_id, target_country = EXCLUDED.target_country,
          created_at = EXCLUDED.created_at`)),
    dropPublication: (apiUrl) =>
      Effect.zipRight(
        run(sql`DELETE FROM feed_push_states WHERE api_url = ${apiUrl}`),
        Effect.asVoid(run(sql`DELETE FROM feed_publications WHERE api_url = ${apiUrl}`))
      ),
    states: (apiUrl) =>
      Effect.map(
        run(sql<StateRow>`SELECT ${stateColumns} FROM feed_push_states WHERE api_url = ${apiUrl} ORDER BY product_id`),
        (rows) => rows.map(toState)
      ),
    claim: (apiUrl, productIds, now, leaseMs) =>
      productIds.length === 0 ? Effect.succeed([]) : Effect.map(
        run(sql<{ product_id: string }>`
          INSERT INTO feed_push_states (api_url, product_id, locked_until)
          SELECT ${apiUrl}, id, ${iso(now + leaseMs)}::timestamptz FROM unnest(${productIds}::text[]) AS ids (id)
          ON CONFLICT (api_url, product_id) DO UPDATE SET locked_until = EXCLUDED.locked_until
          WHERE feed_push_states.locked_until IS NULL OR feed_push_states.locked_until <= ${iso(now)}::timestamptz
          RETURNING product_id`),
        (rows) => rows.map((row) => row.product_id)
      ),
    pushed: (apiUrl, pushed, now) =>
      pushed.length === 0 ? Effect.void : Effect.asVoid(run(sql`
        UPDATE feed_push_states s SET pushed_hash = p.hash, pushed_at = ${iso(now)}::timestamptz, attempts = 0,
          next_attempt_at = NULL, last_error = NULL, dead_at = NULL, locked_until = NULL
        FROM unnest(${pushed.map((p) => p.productId)}::text[], ${pushed.map((p) => p.hash)}::text[]) AS p (id, hash)
        WHERE s.api_url = ${apiUrl} AND s.product_id = p.id`)),
    failed: (apiUrl, productIds, failure, now) =>
      productIds.length === 0 ? Effect.void : Effect.asVoid(run(sql`
        UPDATE feed_push_states SET attempts = attempts + 1, last_error = ${failure.message},
          next_attempt_at = ${failure.nextAttemptAt === undefined ? null : iso(failure.nextAttemptAt)}::timestamptz,
          dead_at = ${failure.nextAttemptAt === undefined ? iso(now) : null}::timestamptz, locked_until = NULL
        WHERE api_url = ${apiUrl} AND product_id = ANY (${productIds}::text[])`)),
    retry: (apiUrl, productIds) =>
      Effect.map(
        run(sql<{ product_id: string }>`
          UPDATE feed_push_states SET attempts = 0, next_attempt_at = NULL, dead_at = NULL, pushed_hash = NULL
          WHERE api_url = ${apiUrl}
            AND (${productIds === undefined} AND dead_at IS NOT NULL
                 OR product_id = ANY (${productIds ?? []}::text[]))
          RETURNING product_id`),
        (rows) => rows.length
      )
  }
})

export const SqlFeedPublicationStore = Layer.effect(FeedPublicationStore, make)
