/** Coupon redemption counts, and the holds a completion takes before the charge. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Migration } from "./migration.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE coupons (
      id              text PRIMARY KEY,
      times_redeemed  integer NOT NULL CHECK (times_redeemed >= 0)
    )`
  yield* sql`
    CREATE TABLE coupon_holds (
      coupon_id   text NOT NULL REFERENCES coupons (id),
      session_id  text NOT NULL,
      expires_at  timestamptz NOT NULL,
      PRIMARY KEY (coupon_id, session_id)
    )`
  yield* sql`CREATE INDEX coupon_holds_session ON coupon_holds (session_id)`
}) satisfies Migration
