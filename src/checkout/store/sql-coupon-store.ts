/**
 * `CouponStore` over SQL. The holds are read by a statement of their own after the coupon rows'
 * lock, so that it sees what the transactions it waited for committed.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { iso } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import type { CouponStore } from "../checkout-store.ts"

export const makeSqlCouponStore = (sql: SqlClient.SqlClient): CouponStore => {
  const run = statementRunner(sql)
  const seed = (coupons: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>) => {
    const rows = new Map<string, number>()
    for (const coupon of coupons) if (!rows.has(coupon.id)) rows.set(coupon.id, coupon.timesRedeemed)
    return rows.size === 0 ? Effect.void : run(sql`
      INSERT INTO coupons ${sql.insert([...rows].map(([id, times_redeemed]) => ({ id, times_redeemed })))}
      ON CONFLICT (id) DO NOTHING`).pipe(Effect.asVoid)
  }

  const usage = Effect.fnUntraced(
    function*(couponIds: ReadonlyArray<string>, now: number, forSession: string, lock: boolean) {
      const ids = [...new Set(couponIds)].sort()
      const counted = new Map<string, number>()
      if (ids.length === 0) return counted as ReadonlyMap<string, number>
      const rows = yield* run(
        lock
          ? sql<{ id: string; times_redeemed: number }>`
              SELECT id, times_redeemed FROM coupons WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`
          : sql<{ id: string; times_redeemed: number }>`
              SELECT id, times_redeemed FROM coupons WHERE id IN ${sql.in(ids)}`
      )
      if (rows.length === 0) return counted
      // The domain's rule (`heldByOthers`) as a filter, so stale holds are never read;
      // `test/checkout/coupon-usage.property.test.ts` holds the two to the same answers.
      const held = yield* run(sql<{ coupon_id: string; held: number }>`
        SELECT coupon_id, COUNT(*)::int AS held FROM coupon_holds
        WHERE coupon_id IN ${sql.in(rows.map((row) => row.id))}
          AND session_id <> ${forSession}
          AND expires_at > ${iso(now)}::timestamptz
        GROUP BY coupon_id`)
      for (const row of rows) counted.set(row.id, Number(row.times_redeemed))
      for (const row of held) counted.set(row.coupon_id, (counted.get(row.coupon_id) ?? 0) + Number(row.held))
      return counted
    }
  )

  const hold = Effect.fnUntraced(function*(sessionId: string, couponIds: ReadonlyArray<string>, expiresAt: number) {
    yield* run(sql`DELETE FROM coupon_holds WHERE session_id = ${sessionId}`)
    const ids = [...new Set(couponIds)].sort()
    if (ids.length > 0) {
      yield* run(
        sql`INSERT INTO coupon_holds ${
          sql.insert(ids.map((coupon_id) => ({ coupon_id, session_id: sessionId, expires_at: iso(expiresAt) })))
        }`
      )
    }
  })

  const releaseHolds = (sessionId: string) =>
    run(sql`DELETE FROM coupon_holds WHERE session_id = ${sessionId}`).pipe(Effect.asVoid)

  const redemptions = run(sql<{ id: string; times_redeemed: number }>`SELECT id, times_redeemed FROM coupons`).pipe(
    Effect.map((rows) =>
      new Map(rows.map((row) => [row.id, Number(row.times_redeemed)])) as ReadonlyMap<string, number>
    )
  )

  return { seed, usage, hold, releaseHolds, redemptions }
}
