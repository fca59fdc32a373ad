/**
 * Versioned database migrations, applied in key order by `Migrator` (recorded in the
 * `effect_sql_migrations` table, each run at most once, under a table lock so several processes
 * may start at the same time).
 *
 * To add a migration, append one entry `"000N_name": Effect…` to `migrations`; never edit or
 * renumber one that has shipped.
 */
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Effect } from "effect"

type Migration = Effect.Effect<void, unknown, SqlClient.SqlClient>

const m0001_checkout: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE checkout_sessions (
      id          text PRIMARY KEY,
      status      text NOT NULL,
      data        jsonb NOT NULL,
      expires_at  timestamptz NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      updated_at  timestamptz NOT NULL DEFAULT now(),
      version     integer NOT NULL DEFAULT 1
    )`
  // The expiry sweep reads only active sessions, oldest deadline first.
  yield* sql`
    CREATE INDEX checkout_sessions_active_expires_at ON checkout_sessions (expires_at)
    WHERE status IN ('not_ready_for_payment', 'ready_for_payment', 'authentication_required')`
  yield* sql`
    CREATE TABLE stock (
      product_id  text PRIMARY KEY,
      on_hand     integer NOT NULL CHECK (on_hand >= 0)
    )`
  yield* sql`
    CREATE TABLE reservations (
      session_id  text NOT NULL,
      product_id  text NOT NULL,
      quantity    integer NOT NULL CHECK (quantity > 0),
      expires_at  timestamptz NOT NULL,
      PRIMARY KEY (session_id, product_id)
    )`
  yield* sql`CREATE INDEX reservations_product_expires_at ON reservations (product_id, expires_at)`
  yield* sql`
    CREATE TABLE orders (
      id                   text PRIMARY KEY,
      checkout_session_id  text NOT NULL UNIQUE,
      data                 jsonb NOT NULL,
      created_at           timestamptz NOT NULL DEFAULT now()
    )`
})

/**
 * Idempotency keys (CONTRACT §6): one row per (API key id, method, path, key). The primary key is
 * what makes the claim atomic across processes (`INSERT … ON CONFLICT`). Only the fingerprint of
 * the request body is kept, never the body; the stored response is replayed as is.
 */
const m0002_idempotency_keys: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      key_id           text NOT NULL,
      method           text NOT NULL,
      path             text NOT NULL,
      idempotency_key  text NOT NULL,
      fingerprint      text NOT NULL,
      state            text NOT NULL CHECK (state IN ('in_flight', 'completed')),
      claim_id         text NOT NULL,
      status           integer,
      headers          jsonb,
      body             bytea,
      created_at       timestamptz NOT NULL,
      expires_at       timestamptz NOT NULL,
      lease_until      timestamptz,
      PRIMARY KEY (key_id, method, path, idempotency_key),
      CHECK (state = 'in_flight' OR (status IS NOT NULL AND headers IS NOT NULL AND body IS NOT NULL))
    )`
  // The clean-up job deletes expired keys, oldest first, in batches.
  yield* sql`CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)`
})

/**
 * The delegate payment vault (CONTRACT §7): one row per `vt_` token. The card is only the
 * AES-256-GCM envelope (key id, IV, ciphertext, tag as bytea); in clear only brand, last 4,
 * funding type and the keyed fingerprint. `state` goes `active` → `used` once.
 */
const m0003_vault_tokens: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE vault_tokens (
      id                   text PRIMARY KEY,
      client_key_id        text NOT NULL,
      allowance_reason     text NOT NULL,
      max_amount           bigint NOT NULL CHECK (max_amount > 0),
      currency             text NOT NULL,
      checkout_session_id  text NOT NULL,
      merchant_id          text NOT NULL,
      expires_at           timestamptz NOT NULL,
      risk_signals         jsonb NOT NULL,
      metadata             jsonb NOT NULL,
      card_key_id          text NOT NULL,
      card_iv              bytea NOT NULL,
      card_ciphertext      bytea NOT NULL,
      card_tag             bytea NOT NULL,
      fingerprint          text NOT NULL,
      brand                text NOT NULL,
      last4                text NOT NULL,
      funding              text NOT NULL,
      state                text NOT NULL CHECK (state IN ('active', 'used')),
      created_at           timestamptz NOT NULL,
      used_at              timestamptz,
      used_by_session      text,
      CHECK ((state = 'used') = (used_at IS NOT NULL AND used_by_session IS NOT NULL))
    )`
  yield* sql`CREATE INDEX vault_tokens_fingerprint ON vault_tokens (fingerprint, created_at)`
  yield* sql`CREATE INDEX vault_tokens_checkout_session ON vault_tokens (checkout_session_id)`
})

/**
 * Order events (CONTRACT §8). `webhook_outbox`: the sender's transactional outbox, one row per
 * event, written in the transaction of the order change; `sequence` numbers the events of one
 * order (delivery follows it); `locked_until` is the lease of the worker delivering it.
 * `received_events` / `received_orders`: the receiver's log of every accepted event (deduplicated
 * by Request-Id and by body hash) and the latest state per order.
 */
const m0004_orders_outbox: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_outbox (
      id                text PRIMARY KEY,
      order_id          text NOT NULL,
      sequence          integer NOT NULL CHECK (sequence >= 1),
      type              text NOT NULL,
      payload           jsonb NOT NULL,
      state             text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
      attempts          integer NOT NULL DEFAULT 0,
      next_attempt_at   timestamptz NOT NULL,
      locked_until      timestamptz,
      first_attempt_at  timestamptz,
      last_error        text,
      last_status       integer,
      created_at        timestamptz NOT NULL,
      delivered_at      timestamptz,
      UNIQUE (order_id, sequence)
    )`
  // The worker reads pending events by due time, and checks for earlier pending events per order.
  yield* sql`CREATE INDEX webhook_outbox_pending_due ON webhook_outbox (next_attempt_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_outbox_pending_order ON webhook_outbox (order_id, sequence) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_outbox_state_created ON webhook_outbox (state, created_at)`
  yield* sql`
    CREATE TABLE received_events (
      request_id   text PRIMARY KEY,
      body_hash    text NOT NULL UNIQUE,
      order_id     text NOT NULL,
      type         text NOT NULL,
      status       text NOT NULL,
      payload      jsonb NOT NULL,
      received_at  timestamptz NOT NULL,
      receipt      bigserial NOT NULL
    )`
  yield* sql`CREATE INDEX received_events_order ON received_events (order_id, receipt)`
  yield* sql`
    CREATE TABLE received_orders (
      order_id         text PRIMARY KEY,
      status           text NOT NULL,
      last_request_id  text NOT NULL,
      payload          jsonb NOT NULL,
      updated_at       timestamptz NOT NULL
    )`
})

/**
 * Payments (issue 6): the attempts of each checkout session, recorded before the provider is
 * called, and the charges of the built-in test processor, keyed by the provider idempotency key.
 */
const m0005_payments: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payment_attempts (
      session_id       text NOT NULL,
      sequence         integer NOT NULL CHECK (sequence > 0),
      idempotency_key  text NOT NULL UNIQUE,
      amount           bigint NOT NULL CHECK (amount >= 0),
      currency         text NOT NULL,
      credential_ref   text NOT NULL,
      state            text NOT NULL CHECK (state IN ('pending', 'succeeded', 'declined')),
      charge_id        text,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      PRIMARY KEY (session_id, sequence)
    )`
  yield* sql`
    CREATE TABLE processor_charges (
      idempotency_key  text PRIMARY KEY,
      id               text NOT NULL UNIQUE,
      amount           bigint NOT NULL,
      currency         text NOT NULL,
      outcome          text NOT NULL CHECK (outcome IN ('approved', 'card_declined', 'insufficient_funds')),
      created_at       timestamptz NOT NULL
    )`
})

/**
 * Coupons (issue 8): the redemption count per catalog coupon (seeded from the catalog like stock)
 * and the holds a completion takes before the charge, counted in the completing transaction.
 */
const m0006_coupons: Migration = Effect.gen(function*() {
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
})

/**
 * The reserved units per product, kept on the stock row (issue 9: summing the reservations of
 * every open session made each create linear in the open sessions, with the hot stock rows
 * locked): `stock.reserved` = the sum of the quantities of *all* the product's rows in
 * `reservations`, expired or not, backfilled here with `reservations` locked against writes.
 * (Processes of an earlier version write reservations without it: stop them before this runs.)
 *
 * Every write to `reservations` goes through one of the functions below, which keep the counter
 * exact in the same call, the stock rows concerned locked first with one
 * `SELECT … ORDER BY product_id FOR UPDATE` (stock rows are always locked in ascending
 * product-id order, so two transactions never deadlock on them). Functions, so that each store
 * operation is one round trip whose statements are planned once per connection; in READ
 * COMMITTED each statement in them sees what was committed before it started (a statement after
 * a lock that waited sees what the transaction it waited for committed). The session's own rows
 * are written only by a transaction holding the session's lock, so they do not change under a
 * call. To change a function, add a migration with `CREATE OR REPLACE FUNCTION`.
 *
 * `SET enable_seqscan = off`: PL/pgSQL prepares each statement once per connection and, after a
 * few calls, may keep a generic plan made with the statistics of that moment until the next
 * ANALYZE. Made while `reservations` is small (a new database), such a plan scans the whole table
 * and goes on doing so as it grows (measured: 1.9 ms a call after a few thousand creates, against
 * 0.35 ms). Every statement here has an index to go by (primary keys,
 * `reservations_product_expires_at`): no plan needs a sequential scan.
 */
const m0007_stock_reserved: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`LOCK TABLE reservations IN SHARE MODE`
  yield* sql`ALTER TABLE stock ADD COLUMN reserved integer NOT NULL DEFAULT 0 CHECK (reserved >= 0)`
  yield* sql`
    UPDATE stock s SET reserved = r.total
    FROM (SELECT product_id, SUM(quantity)::int AS total FROM reservations GROUP BY product_id) r
    WHERE s.product_id = r.product_id`

  // CheckoutStore.lockStock: locks the stock rows of p_products (product-id order) and returns
  // the units available to p_session at p_now: on hand minus the counter, plus what the counter
  // holds that is available to p_session anyway — its own reservations and other sessions'
  // reservations expired but not swept yet. The second statement reads them with a snapshot
  // taken after the locks (primary key and reservations_product_expires_at index scans).
  yield* sql.unsafe(`
    CREATE FUNCTION checkout_lock_stock(p_products text[], p_session text, p_now timestamptz)
    RETURNS TABLE (out_product text, out_available integer)
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_products text[];
      v_free integer[];
    BEGIN
      SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
      INTO v_products, v_free
      FROM (
        SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
        WHERE s.product_id = ANY (p_products)
        ORDER BY s.product_id
        FOR UPDATE
      ) l;
      RETURN QUERY
        SELECT l.product_id, (l.free + COALESCE(b.back, 0))::integer
        FROM unnest(v_products, v_free) AS l (product_id, free)
        LEFT JOIN (
          SELECT r.product_id, SUM(r.quantity) AS back FROM reservations r
          WHERE r.product_id = ANY (v_products) AND (r.session_id = p_session OR r.expires_at <= p_now)
          GROUP BY r.product_id
        ) b ON b.product_id = l.product_id;
    END
    $fn$`)

  // CheckoutStore.setReservations: makes p_session's rows p_products × p_quantities expiring at
  // p_expires_at, writing only the difference (nothing when nothing changes; only the expiry,
  // in place, when only it changes), and moves the counters by the differences in quantity.
  yield* sql.unsafe(`
    CREATE FUNCTION checkout_set_reservations(
      p_session text, p_products text[], p_quantities integer[], p_expires_at timestamptz
    ) RETURNS void
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_products text[];
      v_deltas integer[];
    BEGIN
      SELECT array_agg(d.product_id ORDER BY d.product_id), array_agg(d.delta ORDER BY d.product_id)
      INTO v_products, v_deltas
      FROM (
        SELECT COALESCE(w.product_id, o.product_id) AS product_id,
               COALESCE(w.quantity, 0) - COALESCE(o.quantity, 0) AS delta
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        FULL JOIN (SELECT r.product_id, r.quantity FROM reservations r WHERE r.session_id = p_session) o
          ON o.product_id = w.product_id
      ) d
      WHERE d.delta <> 0;
      IF v_products IS NOT NULL THEN
        PERFORM 1 FROM stock s WHERE s.product_id = ANY (v_products) ORDER BY s.product_id FOR UPDATE;
        UPDATE stock s SET reserved = s.reserved + d.delta
        FROM unnest(v_products, v_deltas) AS d (product_id, delta)
        WHERE s.product_id = d.product_id;
        DELETE FROM reservations r WHERE r.session_id = p_session AND r.product_id <> ALL (p_products);
        INSERT INTO reservations (session_id, product_id, quantity, expires_at)
        SELECT p_session, w.product_id, w.quantity, p_expires_at
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        WHERE NOT EXISTS (SELECT FROM reservations r WHERE r.session_id = p_session AND r.product_id = w.product_id);
      END IF;
      UPDATE reservations r SET quantity = w.quantity, expires_at = p_expires_at
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      WHERE r.session_id = p_session AND r.product_id = w.product_id
        AND (r.quantity <> w.quantity OR r.expires_at <> p_expires_at);
    END
    $fn$`)

  // CheckoutStore.releaseReservations (p_consume false) and consumeReservations (true): deletes
  // p_session's rows and takes them off the counters (consuming: off the stock on hand too).
  yield* sql.unsafe(`
    CREATE FUNCTION checkout_remove_reservations(p_session text, p_consume boolean) RETURNS void
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_products text[];
    BEGIN
      SELECT array_agg(r.product_id) INTO v_products FROM reservations r WHERE r.session_id = p_session;
      IF v_products IS NULL THEN
        RETURN;
      END IF;
      PERFORM 1 FROM stock s WHERE s.product_id = ANY (v_products) ORDER BY s.product_id FOR UPDATE;
      WITH removed AS (
        DELETE FROM reservations r WHERE r.session_id = p_session RETURNING r.product_id, r.quantity
      )
      UPDATE stock s
      SET reserved = s.reserved - removed.quantity,
          on_hand = CASE WHEN p_consume THEN s.on_hand - removed.quantity ELSE s.on_hand END
      FROM removed
      WHERE s.product_id = removed.product_id;
    END
    $fn$`)
})

/**
 * Creating a session in one statement (issue 9): `checkout_create_session` locks the stock rows of
 * the session's reservations (product-id order, like every stock lock), computes what is available
 * to the new session exactly as `checkout_lock_stock` does (the add-back is a second statement,
 * so it sees what a transaction it waited for committed), and only when every reservation fits
 * inserts the session and its reservations and moves the counters; otherwise it changes nothing
 * and returns the availability it saw. `CheckoutStore.insertSessionIfAvailable`.
 */
const m0008_create_session: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION checkout_create_session(
      p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
      p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
      p_now timestamptz
    ) RETURNS jsonb
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_products text[];
      v_free integer[];
      v_fits boolean;
      v_available jsonb;
    BEGIN
      SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
      INTO v_products, v_free
      FROM (
        SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
        WHERE s.product_id = ANY (p_products)
        ORDER BY s.product_id
        FOR UPDATE
      ) l;
      SELECT COALESCE(bool_and(l.product_id IS NOT NULL AND w.quantity <= l.free + COALESCE(b.back, 0)), true),
             COALESCE(jsonb_object_agg(l.product_id, l.free + COALESCE(b.back, 0)) FILTER (WHERE l.product_id IS NOT NULL),
                      '{}'::jsonb)
      INTO v_fits, v_available
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      LEFT JOIN unnest(v_products, v_free) AS l (product_id, free) ON l.product_id = w.product_id
      LEFT JOIN (
        SELECT r.product_id, SUM(r.quantity) AS back FROM reservations r
        WHERE r.product_id = ANY (v_products) AND (r.session_id = p_id OR r.expires_at <= p_now)
        GROUP BY r.product_id
      ) b ON b.product_id = w.product_id;
      IF NOT v_fits THEN
        RETURN jsonb_build_object('inserted', false, 'available', v_available);
      END IF;
      INSERT INTO checkout_sessions (id, status, data, expires_at, created_at, updated_at, version)
      VALUES (p_id, p_status, p_data, p_expires_at, p_created_at, p_updated_at, 1);
      IF cardinality(p_products) > 0 THEN
        UPDATE stock s SET reserved = s.reserved + w.quantity
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        WHERE s.product_id = w.product_id;
        INSERT INTO reservations (session_id, product_id, quantity, expires_at)
        SELECT p_id, w.product_id, w.quantity, p_reserved_until
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
      END IF;
      RETURN jsonb_build_object('inserted', true);
    END
    $fn$`)
})

/**
 * Locking a session for a payment step in one round trip (issue 9): `checkout_lock_session_for_payment`
 * locks the session row, then reads its latest payment attempt and its coupon holds in statements
 * of their own, so they see what a transaction it waited for committed (in one plain statement
 * they would be read on the snapshot taken before the wait). No row when the session is absent.
 * `CheckoutStore.lockSessionForPayment`.
 */
const m0009_lock_session_for_payment: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION checkout_lock_session_for_payment(p_session text)
    RETURNS TABLE (out_data jsonb, out_attempt jsonb, out_coupon_holds text[])
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    BEGIN
      SELECT s.data INTO out_data FROM checkout_sessions s WHERE s.id = p_session FOR UPDATE;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      SELECT jsonb_build_object(
               'session_id', a.session_id, 'sequence', a.sequence, 'idempotency_key', a.idempotency_key,
               'amount', a.amount, 'currency', a.currency, 'credential_ref', a.credential_ref, 'state', a.state,
               'charge_id', a.charge_id,
               'created_ms', (extract(epoch FROM a.created_at) * 1000)::float8,
               'updated_ms', (extract(epoch FROM a.updated_at) * 1000)::float8)
      INTO out_attempt
      FROM payment_attempts a WHERE a.session_id = p_session
      ORDER BY a.sequence DESC LIMIT 1;
      out_coupon_holds := ARRAY(SELECT h.coupon_id FROM coupon_holds h WHERE h.session_id = p_session ORDER BY h.coupon_id);
      RETURN NEXT;
    END
    $fn$`)
})

/**
 * The add-back of `checkout_lock_stock` and `checkout_create_session` (the session's own
 * reservations and other sessions' expired ones) as two index range scans (issue 9): written as
 * one condition with OR, it was planned as a scan of every reservation of the products, live ones
 * included — a create or stock lock cost grew with the number of open carts holding the product
 * (3.5 ms at 20 000). Now it reads only the rows it adds back: the session's (primary key) and the
 * expired ones (`reservations_product_expires_at`). Same results; same signatures.
 */
const m0010_add_back_by_index: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION checkout_lock_stock(p_products text[], p_session text, p_now timestamptz)
    RETURNS TABLE (out_product text, out_available integer)
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_products text[];
      v_free integer[];
    BEGIN
      SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
      INTO v_products, v_free
      FROM (
        SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
        WHERE s.product_id = ANY (p_products)
        ORDER BY s.product_id
        FOR UPDATE
      ) l;
      RETURN QUERY
        SELECT l.product_id, (l.free + COALESCE(b.back, 0))::integer
        FROM unnest(v_products, v_free) AS l (product_id, free)
        LEFT JOIN (
          SELECT x.product_id, SUM(x.quantity) AS back FROM (
            SELECT r.product_id, r.quantity FROM reservations r
            WHERE r.session_id = p_session AND r.product_id = ANY (v_products)
            UNION ALL
            SELECT r.product_id, r.quantity FROM reservations r
            WHERE r.product_id = ANY (v_products) AND r.expires_at <= p_now AND r.session_id <> p_session
          ) x
          GROUP BY x.product_id
        ) b ON b.product_id = l.product_id;
    END
    $fn$`)
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION checkout_create_session(
      p_id text, p_status text, p_data jsonb, p_expires_at timestamptz, p_created_at timestamptz,
      p_updated_at timestamptz, p_products text[], p_quantities integer[], p_reserved_until timestamptz,
      p_now timestamptz
    ) RETURNS jsonb
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_products text[];
      v_free integer[];
      v_fits boolean;
      v_available jsonb;
    BEGIN
      SELECT array_agg(l.product_id ORDER BY l.product_id), array_agg(l.free ORDER BY l.product_id)
      INTO v_products, v_free
      FROM (
        SELECT s.product_id, s.on_hand - s.reserved AS free FROM stock s
        WHERE s.product_id = ANY (p_products)
        ORDER BY s.product_id
        FOR UPDATE
      ) l;
      SELECT COALESCE(bool_and(l.product_id IS NOT NULL AND w.quantity <= l.free + COALESCE(b.back, 0)), true),
             COALESCE(jsonb_object_agg(l.product_id, l.free + COALESCE(b.back, 0)) FILTER (WHERE l.product_id IS NOT NULL),
                      '{}'::jsonb)
      INTO v_fits, v_available
      FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
      LEFT JOIN unnest(v_products, v_free) AS l (product_id, free) ON l.product_id = w.product_id
      LEFT JOIN (
        SELECT x.product_id, SUM(x.quantity) AS back FROM (
          SELECT r.product_id, r.quantity FROM reservations r
          WHERE r.session_id = p_id AND r.product_id = ANY (v_products)
          UNION ALL
          SELECT r.product_id, r.quantity FROM reservations r
          WHERE r.product_id = ANY (v_products) AND r.expires_at <= p_now AND r.session_id <> p_id
        ) x
        GROUP BY x.product_id
      ) b ON b.product_id = w.product_id;
      IF NOT v_fits THEN
        RETURN jsonb_build_object('inserted', false, 'available', v_available);
      END IF;
      INSERT INTO checkout_sessions (id, status, data, expires_at, created_at, updated_at, version)
      VALUES (p_id, p_status, p_data, p_expires_at, p_created_at, p_updated_at, 1);
      IF cardinality(p_products) > 0 THEN
        UPDATE stock s SET reserved = s.reserved + w.quantity
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity)
        WHERE s.product_id = w.product_id;
        INSERT INTO reservations (session_id, product_id, quantity, expires_at)
        SELECT p_id, w.product_id, w.quantity, p_reserved_until
        FROM unnest(p_products, p_quantities) AS w (product_id, quantity);
      END IF;
      RETURN jsonb_build_object('inserted', true);
    END
    $fn$`)
})

/**
 * Completing a paid session in one statement (issue 9): the completing transaction was six round
 * trips (BEGIN, lock, order and event, session and attempt, reservations, COMMIT), each costing
 * the server as much CPU to send as PostgreSQL spends running it.
 *
 * - `order_save_with_event` writes an order row (a new one, or the new state of an existing one)
 *   and queues its webhook event with the next sequence of the order: `OrderStore.saveOrderWithEvent`
 *   and the completion below both call it, so the SQL of an order change is written once.
 * - `checkout_complete_paid` is `CheckoutStore.completePaidSessionIfUnchanged`: it locks the
 *   session and goes on only if the session is still at `p_version` (what the caller's first
 *   payment transaction wrote) and its attempt `p_sequence` is still pending; then it marks the
 *   attempt succeeded, stores the completed session, saves the order with its `order_create`
 *   event, counts the held coupons and consumes the reservations — locks in the order of the
 *   transaction it replaces (session, coupons in id order, stock in product-id order). It returns
 *   the event's sequence, or NULL with nothing written when the session changed.
 */
const m0011_complete_paid: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION order_save_with_event(
      p_order_id text, p_session text, p_order_data jsonb, p_order_created_at timestamptz,
      p_event_id text, p_event_type text, p_event_payload jsonb, p_now timestamptz
    ) RETURNS integer
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_sequence integer;
    BEGIN
      INSERT INTO orders (id, checkout_session_id, data, created_at)
      VALUES (p_order_id, p_session, p_order_data, p_order_created_at)
      ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data;
      INSERT INTO webhook_outbox (id, order_id, sequence, type, payload, state, attempts, next_attempt_at, created_at)
      VALUES (p_event_id, p_order_id,
              COALESCE((SELECT MAX(o.sequence) FROM webhook_outbox o WHERE o.order_id = p_order_id), 0) + 1,
              p_event_type, p_event_payload, 'pending', 0, p_now, p_now)
      RETURNING sequence INTO v_sequence;
      RETURN v_sequence;
    END
    $fn$`)
  yield* sql.unsafe(`
    CREATE FUNCTION checkout_complete_paid(
      p_session text, p_version bigint, p_status text, p_data jsonb, p_expires_at timestamptz,
      p_updated_at timestamptz, p_sequence integer, p_charge_id text, p_paid_at timestamptz,
      -- then the arguments of order_save_with_event
      p_order_id text, p_order_session text, p_order_data jsonb, p_order_created_at timestamptz,
      p_event_id text, p_event_type text, p_event_payload jsonb, p_now timestamptz
    ) RETURNS integer
    LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      v_version bigint;
      v_coupons text[];
      v_sequence integer;
    BEGIN
      SELECT s.version INTO v_version FROM checkout_sessions s WHERE s.id = p_session FOR UPDATE;
      IF v_version IS DISTINCT FROM p_version THEN
        RETURN NULL;
      END IF;
      UPDATE payment_attempts a SET state = 'succeeded', charge_id = p_charge_id, updated_at = p_paid_at
      WHERE a.session_id = p_session AND a.sequence = p_sequence AND a.state = 'pending';
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      UPDATE checkout_sessions
      SET status = p_status, data = p_data, expires_at = p_expires_at, updated_at = p_updated_at,
          version = version + 1
      WHERE id = p_session;
      v_sequence := order_save_with_event(p_order_id, p_order_session, p_order_data, p_order_created_at,
                                          p_event_id, p_event_type, p_event_payload, p_now);
      -- The rows every checkout shares last, so they stay locked the shortest time.
      SELECT array_agg(h.coupon_id ORDER BY h.coupon_id) INTO v_coupons FROM coupon_holds h WHERE h.session_id = p_session;
      IF v_coupons IS NOT NULL THEN
        PERFORM 1 FROM coupons c WHERE c.id = ANY (v_coupons) ORDER BY c.id FOR UPDATE;
        UPDATE coupons c SET times_redeemed = c.times_redeemed + 1 WHERE c.id = ANY (v_coupons);
        DELETE FROM coupon_holds h WHERE h.session_id = p_session;
      END IF;
      PERFORM checkout_remove_reservations(p_session, true);
      RETURN v_sequence;
    END
    $fn$`)
})

/** All migrations, by `<id>_<name>`. Append new ones at the end. */
/**
 * Rate limits shared by every process (CONTRACT §1: invariants hold across processes; §7 and the
 * receiver: per API key, per source). One row per token bucket: tokens left as of `updated_at`
 * (the processes' clock, Unix ms) and when it will be full again (`full_at`: then the row means
 * nothing and the sweep deletes it). `rate_limit_take` is the bucket of `src/rate-limit/rate-limit.ts`
 * in one statement: it creates the row if absent, locks it, refills it to `p_now` and, when
 * `p_take` and a token is there, takes it; it returns the tokens before taking, from which the
 * caller decides (with the same epsilon) and computes Retry-After.
 */
const m0012_rate_limits: Migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_limit_buckets (
      bucket_key  text PRIMARY KEY,
      tokens      double precision NOT NULL,
      updated_at  bigint NOT NULL,
      full_at     bigint NOT NULL
    )`
  yield* sql`CREATE INDEX rate_limit_buckets_full_at ON rate_limit_buckets (full_at)`
  yield* sql.unsafe(`
    CREATE FUNCTION rate_limit_take(
      p_key text, p_capacity double precision, p_per_ms double precision, p_now bigint, p_take boolean
    ) RETURNS double precision
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_tokens double precision;
      v_updated bigint;
      v_left double precision;
    BEGIN
      IF p_take THEN
        -- Create it if absent (a concurrent creator waits here), so there is a row to lock.
        INSERT INTO rate_limit_buckets (bucket_key, tokens, updated_at, full_at)
        VALUES (p_key, p_capacity, p_now, p_now)
        ON CONFLICT (bucket_key) DO NOTHING;
        SELECT b.tokens, b.updated_at INTO v_tokens, v_updated
        FROM rate_limit_buckets b WHERE b.bucket_key = p_key FOR UPDATE;
      ELSE
        SELECT b.tokens, b.updated_at INTO v_tokens, v_updated
        FROM rate_limit_buckets b WHERE b.bucket_key = p_key;
      END IF;
      IF NOT FOUND THEN
        -- Absent, or swept in between as full: a full bucket either way.
        v_tokens := p_capacity;
        v_updated := p_now;
      END IF;
      v_tokens := LEAST(p_capacity, v_tokens + GREATEST(0, p_now - v_updated) * p_per_ms);
      v_updated := GREATEST(p_now, v_updated);
      IF p_take AND v_tokens + 1e-9 >= 1 THEN
        v_left := GREATEST(0, v_tokens - 1);
        INSERT INTO rate_limit_buckets (bucket_key, tokens, updated_at, full_at)
        VALUES (p_key, v_left, v_updated,
                CASE WHEN p_per_ms > 0 THEN v_updated + ceil((p_capacity - v_left) / p_per_ms)::bigint
                     ELSE 9223372036854775807 END)
        ON CONFLICT (bucket_key) DO UPDATE
        SET tokens = EXCLUDED.tokens, updated_at = EXCLUDED.updated_at, full_at = EXCLUDED.full_at;
      END IF;
      RETURN v_tokens;
    END
    $fn$`)
})

export const migrations: Record<string, Migration> = {
  "0001_checkout": m0001_checkout,
  "0002_idempotency_keys": m0002_idempotency_keys,
  "0003_vault_tokens": m0003_vault_tokens,
  "0004_orders_outbox": m0004_orders_outbox,
  "0005_payments": m0005_payments,
  "0006_coupons": m0006_coupons,
  "0007_stock_reserved": m0007_stock_reserved,
  "0008_create_session": m0008_create_session,
  "0009_lock_session_for_payment": m0009_lock_session_for_payment,
  "0010_add_back_by_index": m0010_add_back_by_index,
  "0011_complete_paid": m0011_complete_paid,
  "0012_rate_limits": m0012_rate_limits
}

/** The loader for `Migrator.make(...)({ loader })` / `PgMigrator.layer({ loader })`. */
export const migrationsLoader: Migrator.Loader = Migrator.fromRecord(migrations)
