/** Every migration, applied once each in id order; a shipped one is never edited or renumbered (0008–0011 are gone; 0024 is the Stripe payments'; 0026 the products'). */
import * as Migrator from "@effect/sql/Migrator"
import m0001 from "./0001_checkout.ts"
import m0002 from "./0002_idempotency_keys.ts"
import m0003 from "./0003_vault_tokens.ts"
import m0004 from "./0004_orders_outbox.ts"
import m0005 from "./0005_payments.ts"
import m0006 from "./0006_coupons.ts"
import m0007 from "./0007_stock_reserved.ts"
import m0012 from "./0012_rate_limits.ts"
import m0013 from "./0013_sql_functions.ts"
import m0014 from "./0014_checkout_function_results.ts"
import m0015 from "./0015_authentication_sessions.ts"
import m0016 from "./0016_charge_authentication.ts"
import m0017 from "./0017_order_permalinks.ts"
import m0018 from "./0018_console_sessions.ts"
import m0019 from "./0019_stock_shards.ts"
import m0020 from "./0020_session_json_text.ts"
import m0021 from "./0021_order_json_text.ts"
import m0022 from "./0022_pending_payments.ts"
import m0023 from "./0023_voided_charges.ts"
import m0024 from "./0024_stripe_payments.ts"
import m0025 from "./0025_stripe_events.ts"
import m0026 from "./0026_products.ts"
import m0030 from "./0030_feeds.ts"
import m0031 from "./0031_feed_publication.ts"
import m0040 from "./0040_carts.ts"
import type { Migration } from "./migration.ts"

export const migrations: Record<string, Migration> = {
  "0001_checkout": m0001,
  "0002_idempotency_keys": m0002,
  "0003_vault_tokens": m0003,
  "0004_orders_outbox": m0004,
  "0005_payments": m0005,
  "0006_coupons": m0006,
  "0007_stock_reserved": m0007,
  "0012_rate_limits": m0012,
  "0013_sql_functions": m0013,
  "0014_checkout_function_results": m0014,
  "0015_authentication_sessions": m0015,
  "0016_charge_authentication": m0016,
  "0017_order_permalinks": m0017,
  "0018_console_sessions": m0018,
  "0019_stock_shards": m0019,
  "0020_session_json_text": m0020,
  "0021_order_json_text": m0021,
  "0022_pending_payments": m0022,
  "0023_voided_charges": m0023,
  "0024_stripe_payments": m0024,
  "0025_stripe_events": m0025,
  "0026_products": m0026,
  "0030_feeds": m0030,
  "0031_feed_publication": m0031,
  "0040_carts": m0040
}

export const migrationsLoader: Migrator.Loader = Migrator.fromRecord(migrations)
