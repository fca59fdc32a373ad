/**
 * `CheckoutStore` over an `@effect/sql` client speaking PostgreSQL (real PostgreSQL through
 * `@effect/sql-pg`, or the embedded PGlite behind its socket server).
 *
 * Concurrency is handled by row locks, in the default READ COMMITTED isolation:
 * - `lockSession` is `SELECT … FOR UPDATE` on the session row; a second transaction on the same
 *   session waits there until the first commits, then reads the committed row;
 * - the reservations of one session are written only by a transaction holding that session's
 *   lock (or creating it): `setReservations`, `consumeReservations` and `releaseReservations`
 *   compute their changes from the session's rows as their statement sees them;
 * - `findExpiredSessionIds` uses `FOR UPDATE SKIP LOCKED`, so several sweepers share the work.
 * - the `version` column moves on with every write of the session: the single-statement writes
 *   that need no transaction (`updateSessionKeepingReservationsIfUnchanged`,
 *   `completePaidSessionIfUnchanged`) write only if the session is still at the version read.
 *
 * Stock and reservations. `stock.reserved` is the sum of the quantities of *all* the product's
 * rows in `reservations`, expired or not. Every write to `reservations` is one call of a PL/pgSQL
 * function of migration 0007 (`checkout_set_reservations`, `checkout_remove_reservations`) that
 * keeps the counter exact in the same call, the stock rows concerned locked first by one
 * `SELECT … ORDER BY product_id FOR UPDATE`. Two transactions never deadlock on stock rows as
 * long as each takes its stock locks in one ascending pass: `lockStock` locks every product the
 * transaction's reservation write then touches (that write re-locks rows already held), and the
 * expiry sweep, which releases many sessions in one transaction, has all their stock rows locked
 * at once by `findExpiredSessionIds`.
 *
 * `lockStock` (`checkout_lock_stock`) locks the stock rows in product-id order and returns
 * `on_hand - reserved` (a locking read returns the latest committed version of each row, counter
 * included) plus what the counter holds that is available to the session anyway: its own
 * reservations and other sessions' reservations expired but not swept yet. Those are read by a
 * *second* statement, indexed (primary key; `reservations_product_expires_at`), whatever the
 * number of open sessions: a READ COMMITTED statement reads with the snapshot taken when it
 * started, so a read inside the locking statement would miss what the transaction it waited for
 * committed (an expired reservation it deleted, already taken off the counter, say). Functions,
 * so that each of these is one round trip, with statements planned once per connection.
 *
 * `transaction` is `sql.withTransaction`: the outermost call is BEGIN/COMMIT, nested calls are
 * savepoints (a failing inner call rolls back only its own writes), and every statement run inside
 * uses the transaction's connection.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { SessionStatus } from "./checkout-schemas.ts"
import { INTERNAL_SESSION_FIELDS, type Session } from "./session-model.ts"
import { CheckoutStore, type CheckoutStoreService, type InsertIfAvailable, type PaymentAttempt, type SessionForPayment, type SessionJson, type StockLevel } from "./checkout-store.ts"
import { fromSqlError, StorageError } from "../db/storage-error.ts"
import { sqlTransaction } from "../db/sql-transaction.ts"
import { orderChangeArguments } from "../orders/sql-order-change.ts"

// ---------------------------------------------------------------------------------------------
// Rows

const SESSION_STATUSES: ReadonlySet<unknown> = new Set(SessionStatus.literals)

/**
 * A stored session. The JSON is written only by this store, from an already typed `Session`
 * (`sessionJson`), so a full schema decode on every read (about 50 µs, a large part of a GET)
 * would only re-check what was checked before writing: a structural check that it is what this
 * store writes (an object with a string `id` and a known `status`) is enough.
 */
const isStoredSession = (value: unknown): value is Session =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  typeof (value as { readonly id?: unknown }).id === "string" &&
  SESSION_STATUSES.has((value as { readonly status?: unknown }).status)

/** A row of `getSessionJson`: what a stored session's status and deadline must be to be answered. */
const sessionJsonFromRow = (
  row: { readonly status: unknown; readonly expires_at: unknown; readonly json: unknown }
): SessionJson | undefined =>
  SESSION_STATUSES.has(row.status) && typeof row.expires_at === "string" && typeof row.json === "string"
    ? { status: row.status as SessionJson["status"], expires_at: row.expires_at, json: row.json }
    : undefined

/** The stored JSON is the session as typed: the schema has no transformations (checked here). */
const sessionJson = (session: Session): string => {
  const encoded: typeof Session.Encoded = session
  return JSON.stringify(encoded)
}

const iso = (epochMillis: number): string => new Date(epochMillis).toISOString()

/** `jsonb` arrives parsed from node-postgres; accept text too, for other drivers. */
const jsonValue = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

// ---------------------------------------------------------------------------------------------

export const make: Effect.Effect<CheckoutStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const run = <A>(effect: Effect.Effect<A, SqlError.SqlError>): Effect.Effect<A, StorageError> =>
    Effect.mapError(effect, fromSqlError)

  const sessionFromRow = (
    row: { readonly data: unknown } | undefined
  ): Effect.Effect<Option.Option<Session>, StorageError> => {
    if (row === undefined) return Effect.succeed(Option.none())
    let json: unknown
    try {
      json = jsonValue(row.data)
    } catch (cause) {
      return Effect.fail(new StorageError({ reason: "failure", cause }))
    }
    return isStoredSession(json)
      ? Effect.succeed(Option.some(json))
      : Effect.fail(
        new StorageError({ reason: "failure", cause: new Error("stored session: not an object with an id and a status") })
      )
  }

  const transaction: CheckoutStoreService["transaction"] = sqlTransaction(sql)

  const getSession = (id: string) =>
    run(sql<{ data: unknown }>`SELECT data FROM checkout_sessions WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) => sessionFromRow(rows[0]))
    )

  /**
   * The wire form projected and serialized by PostgreSQL (`data` without the internal fields, as
   * text): no JSON parsed or built here. jsonb's text form spaces its separators and orders keys
   * its own way; it is the same JSON value.
   */
  const getSessionJson = (id: string): Effect.Effect<Option.Option<SessionJson>, StorageError> =>
    run(sql<{ status: unknown; expires_at: unknown; json: unknown }>`
      SELECT data->>'status' AS status, data->>'expires_at' AS expires_at,
             (data - ${INTERNAL_SESSION_FIELDS}::text[])::text AS json
      FROM checkout_sessions WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) => {
        if (rows[0] === undefined) return Effect.succeed(Option.none())
        const read = sessionJsonFromRow(rows[0])
        return read === undefined
          ? Effect.fail(new StorageError({ reason: "failure", cause: new Error("stored session: no known status or no deadline") }))
          : Effect.succeed(Option.some(read))
      })
    )

  const lockSession = (id: string) =>
    run(sql<{ data: unknown }>`SELECT data FROM checkout_sessions WHERE id = ${id} FOR UPDATE`).pipe(
      Effect.flatMap((rows) => sessionFromRow(rows[0]))
    )

  const insertSession = (session: Session) =>
    run(sql`
      INSERT INTO checkout_sessions (id, status, data, expires_at, created_at, updated_at, version)
      VALUES (${session.id}, ${session.status}, ${sessionJson(session)}::jsonb, ${session.expires_at}::timestamptz,
              ${session.created_at}::timestamptz, ${session.updated_at}::timestamptz, 1)`).pipe(Effect.asVoid)

  /** An update of `session` must have matched its row. */
  const updatedOne = (session: Session) => (rows: ReadonlyArray<{ readonly id: string }>) =>
    rows.length === 1
      ? Effect.void
      : Effect.fail(new StorageError({ reason: "failure", cause: new Error(`updateSession: no session ${session.id}`) }))

  const updateSession = (session: Session) =>
    run(sql<{ id: string }>`
      UPDATE checkout_sessions
      SET status = ${session.status}, data = ${sessionJson(session)}::jsonb,
          expires_at = ${session.expires_at}::timestamptz, updated_at = ${session.updated_at}::timestamptz,
          version = version + 1
      WHERE id = ${session.id}
      RETURNING id`).pipe(Effect.flatMap(updatedOne(session)))

  // One statement: the reservation rows' expiry follows the session's (quantities, and so the
  // stock counters, unchanged); with `version`, only if the row is still at that version.
  const keepingReservations = (session: Session, expiresAt: number, version: number | undefined) =>
    run(sql<{ id: string }>`
      WITH updated AS (
        UPDATE checkout_sessions
        SET status = ${session.status}, data = ${sessionJson(session)}::jsonb,
            expires_at = ${session.expires_at}::timestamptz, updated_at = ${session.updated_at}::timestamptz,
            version = version + 1
        WHERE id = ${session.id}${version === undefined ? sql`` : sql` AND version = ${version}`}
        RETURNING id
      ), moved AS (
        UPDATE reservations SET expires_at = ${iso(expiresAt)}::timestamptz
        WHERE session_id = (SELECT id FROM updated) AND expires_at <> ${iso(expiresAt)}::timestamptz
      )
      SELECT id FROM updated`)

  const updateSessionKeepingReservations = (session: Session, expiresAt: number) =>
    keepingReservations(session, expiresAt, undefined).pipe(Effect.flatMap(updatedOne(session)))

  const getSessionVersion = (id: string) =>
    run(sql<{ data: unknown; version: number | string }>`
      SELECT data, version FROM checkout_sessions WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) =>
        Effect.map(
          sessionFromRow(rows[0]),
          Option.map((session) => ({ session, version: Number(rows[0]!.version) }))
        )
      )
    )

  const updateSessionKeepingReservationsIfUnchanged = (session: Session, expiresAt: number, version: number) =>
    keepingReservations(session, expiresAt, version).pipe(Effect.map((rows) => rows.length === 1))

  const insertSessionIfAvailable: CheckoutStoreService["insertSessionIfAvailable"] = (
    session,
    reservations,
    expiresAt,
    now
  ) => {
    const wanted = [...reservations].filter(([, quantity]) => quantity > 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return run(sql<{ result: unknown }>`
      SELECT checkout_create_session(
        ${session.id}, ${session.status}, ${sessionJson(session)}::jsonb, ${session.expires_at}::timestamptz,
        ${session.created_at}::timestamptz, ${session.updated_at}::timestamptz,
        ${wanted.map(([productId]) => productId)}::text[], ${wanted.map(([, quantity]) => quantity)}::int[],
        ${iso(expiresAt)}::timestamptz, ${iso(now)}::timestamptz
      ) AS result`).pipe(
      Effect.flatMap((rows): Effect.Effect<InsertIfAvailable, StorageError> => {
        const result = jsonValue(rows[0]?.result) as
          | { readonly inserted?: unknown; readonly available?: Record<string, unknown> }
          | undefined
        if (result?.inserted === true) return Effect.succeed({ inserted: true })
        if (result?.inserted === false && typeof result.available === "object" && result.available !== null) {
          const available = new Map(Object.entries(result.available).map(([id, n]) => [id, Number(n)]))
          return Effect.succeed({ inserted: false, available })
        }
        return Effect.fail(new StorageError({ reason: "failure", cause: new Error("checkout_create_session: no result") }))
      })
    )
  }

  const lockStock = (productIds: ReadonlyArray<string>, now: number, forSession: string) =>
    Effect.gen(function*() {
      const ids = [...new Set(productIds)].sort()
      if (ids.length === 0) return new Map<string, number>() as ReadonlyMap<string, number>
      const rows = yield* run(sql<{ product_id: string; available: number }>`
        SELECT out_product AS product_id, out_available AS available
        FROM checkout_lock_stock(${ids}::text[], ${forSession}, ${iso(now)}::timestamptz)`)
      return new Map(rows.map((row) => [row.product_id, Number(row.available)])) as ReadonlyMap<string, number>
    })

  const setReservations = (sessionId: string, reservations: ReadonlyMap<string, number>, expiresAt: number) => {
    const wanted = [...reservations].filter(([, quantity]) => quantity > 0)
    return run(sql`
      SELECT checkout_set_reservations(${sessionId}, ${wanted.map(([productId]) => productId)}::text[],
                                       ${wanted.map(([, quantity]) => quantity)}::int[], ${iso(expiresAt)}::timestamptz)`)
      .pipe(Effect.asVoid)
  }

  const consumeReservations = (sessionId: string) =>
    run(sql`SELECT checkout_remove_reservations(${sessionId}, true)`).pipe(Effect.asVoid)

  const releaseReservations = (sessionId: string) =>
    run(sql`SELECT checkout_remove_reservations(${sessionId}, false)`).pipe(Effect.asVoid)

  const findExpiredSessionIds = (now: number, limit: number) =>
    limit <= 0
      ? Effect.succeed([])
      : Effect.gen(function*() {
        const rows = yield* run(sql<{ id: string }>`
          SELECT id FROM checkout_sessions
          WHERE status IN ('not_ready_for_payment', 'ready_for_payment', 'authentication_required')
            AND expires_at <= ${iso(now)}::timestamptz
          ORDER BY expires_at
          LIMIT ${Math.floor(limit)}
          FOR UPDATE SKIP LOCKED`)
        const ids = rows.map((row) => row.id)
        // The sweep then releases these sessions' reservations one session at a time in this
        // transaction, each release locking its products' stock rows: lock them all now, in one
        // ascending pass, so that the sweep never locks one out of order (it deadlocked with
        // creates locking the same rows in order: test/checkout/reservation-counter.test.ts).
        // Outside a transaction the locks would end with the statement: not taken.
        if (ids.length > 0 && Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))) {
          yield* run(sql`
            SELECT product_id FROM stock
            WHERE product_id IN (SELECT product_id FROM reservations WHERE session_id = ANY (${ids}::text[]))
            ORDER BY product_id
            FOR UPDATE`)
        }
        return ids
      })

  /**
   * New stock rows start with the counter of the reservations already stored for them (normally
   * none): with the reservations table locked against writes (SHARE) while they are inserted, so
   * no reservation lands between the sum and the row. Only when some product is missing, which
   * is at the first start with a new catalog.
   */
  const seedStock = (products: ReadonlyArray<{ readonly id: string; readonly stock: number }>) =>
    Effect.gen(function*() {
      const rows = new Map<string, number>()
      for (const product of products) if (!rows.has(product.id)) rows.set(product.id, product.stock)
      if (rows.size === 0) return
      const stored = yield* run(sql<{ product_id: string }>`
        SELECT product_id FROM stock WHERE product_id = ANY (${[...rows.keys()]}::text[])`)
      for (const row of stored) rows.delete(row.product_id)
      if (rows.size === 0) return
      const missing = [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      yield* transaction(Effect.zipRight(
        run(sql`LOCK TABLE reservations IN SHARE MODE`),
        run(sql`
          INSERT INTO stock (product_id, on_hand, reserved)
          SELECT v.product_id, v.on_hand,
                 COALESCE((SELECT SUM(r.quantity) FROM reservations r WHERE r.product_id = v.product_id), 0)
          FROM unnest(${missing.map(([id]) => id)}::text[], ${missing.map(([, stock]) => stock)}::int[])
            AS v (product_id, on_hand)
          ON CONFLICT (product_id) DO NOTHING`)
      ))
    })

  /** Live reservations: the counter minus the expired ones not swept yet. */
  const stockLevels = (now: number) =>
    run(sql<{ product_id: string; on_hand: number; reserved: number }>`
      SELECT s.product_id, s.on_hand, s.reserved - COALESCE(e.expired, 0) AS reserved
      FROM stock s
      LEFT JOIN (
        SELECT product_id, SUM(quantity)::int AS expired FROM reservations
        WHERE expires_at <= ${iso(now)}::timestamptz
        GROUP BY product_id
      ) e ON e.product_id = s.product_id
      ORDER BY s.product_id COLLATE "C"`).pipe(
      Effect.map((rows) =>
        rows.map((row): StockLevel => ({
          productId: row.product_id,
          onHand: Number(row.on_hand),
          reserved: Number(row.reserved)
        }))
      )
    )

  const ping = run(sql`SELECT 1`).pipe(Effect.asVoid)

  interface AttemptRow {
    readonly session_id: string
    readonly sequence: number
    readonly idempotency_key: string
    readonly amount: number | string
    readonly currency: string
    readonly credential_ref: string
    readonly state: PaymentAttempt["state"]
    readonly charge_id: string | null
    readonly created_ms: number | string
    readonly updated_ms: number | string
  }
  const attemptFromRow = (row: AttemptRow): PaymentAttempt => ({
    sessionId: row.session_id,
    sequence: Number(row.sequence),
    idempotencyKey: row.idempotency_key,
    amount: Number(row.amount),
    currency: row.currency,
    credentialRef: row.credential_ref,
    state: row.state,
    chargeId: row.charge_id ?? undefined,
    createdAt: Math.round(Number(row.created_ms)),
    updatedAt: Math.round(Number(row.updated_ms))
  })

  const lockSessionForPayment = (id: string) =>
    run(sql<{ out_data: unknown; out_attempt: unknown; out_coupon_holds: ReadonlyArray<string> | null }>`
      SELECT out_data, out_attempt, out_coupon_holds FROM checkout_lock_session_for_payment(${id})`).pipe(
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(Option.none<SessionForPayment>())
        return Effect.map(sessionFromRow({ data: row.out_data }), (session) =>
          Option.map(session, (session): SessionForPayment => ({
            session,
            latestAttempt: row.out_attempt === null || row.out_attempt === undefined
              ? Option.none()
              : Option.some(attemptFromRow(jsonValue(row.out_attempt) as AttemptRow)),
            couponHolds: row.out_coupon_holds ?? []
          })))
      })
    )

  // One statement, all or nothing: the attempt is written only if the session exists, the session
  // only if the attempt was written (a missing session or attempt matches no row; a duplicate
  // attempt fails the statement).
  const updateSessionAndAttempt: CheckoutStoreService["updateSessionAndAttempt"] = (session, attempt, write) =>
    run(sql<{ version: number | string }>`
      WITH attempt AS (${
      write === "insert"
        ? sql`
        INSERT INTO payment_attempts (session_id, sequence, idempotency_key, amount, currency, credential_ref,
                                      state, charge_id, created_at, updated_at)
        SELECT ${attempt.sessionId}, ${attempt.sequence}, ${attempt.idempotencyKey}, ${attempt.amount},
               ${attempt.currency}, ${attempt.credentialRef}, ${attempt.state}, ${attempt.chargeId ?? null},
               ${iso(attempt.createdAt)}::timestamptz, ${iso(attempt.updatedAt)}::timestamptz
        WHERE EXISTS (SELECT 1 FROM checkout_sessions WHERE id = ${session.id})
        RETURNING sequence`
        : sql`
        UPDATE payment_attempts
        SET state = ${attempt.state}, charge_id = ${attempt.chargeId ?? null},
            updated_at = ${iso(attempt.updatedAt)}::timestamptz
        WHERE session_id = ${attempt.sessionId} AND sequence = ${attempt.sequence}
          AND EXISTS (SELECT 1 FROM checkout_sessions WHERE id = ${session.id})
        RETURNING sequence`
    })
      UPDATE checkout_sessions
      SET status = ${session.status}, data = ${sessionJson(session)}::jsonb,
          expires_at = ${session.expires_at}::timestamptz, updated_at = ${session.updated_at}::timestamptz,
          version = version + 1
      WHERE id = ${session.id} AND EXISTS (SELECT 1 FROM attempt)
      RETURNING version`).pipe(
      Effect.flatMap((rows) =>
        rows.length === 1 ? Effect.succeed(Number(rows[0]!.version)) : Effect.fail(
          new StorageError({
            reason: "failure",
            cause: new Error(`updateSessionAndAttempt: no session ${session.id} or no attempt ${attempt.idempotencyKey}`)
          })
        )
      )
    )

  // One statement: `checkout_complete_paid` (migration 0011).
  const completePaidSessionIfUnchanged: CheckoutStoreService["completePaidSessionIfUnchanged"] = (completion) => {
    const { session } = completion
    return run(sql<{ sequence: number | string | null }>`
      SELECT checkout_complete_paid(
        ${session.id}, ${completion.version}, ${session.status}, ${sessionJson(session)}::jsonb,
        ${session.expires_at}::timestamptz, ${session.updated_at}::timestamptz, ${completion.attemptSequence},
        ${completion.chargeId}, ${iso(completion.now)}::timestamptz, ${orderChangeArguments(sql, completion.order)}
      ) AS sequence`).pipe(Effect.map((rows) => rows[0]?.sequence !== undefined && rows[0].sequence !== null))
  }

  const updatePaymentAttempt = (attempt: PaymentAttempt) =>
    run(sql<{ sequence: number }>`
      UPDATE payment_attempts
      SET state = ${attempt.state}, charge_id = ${attempt.chargeId ?? null},
          updated_at = ${iso(attempt.updatedAt)}::timestamptz
      WHERE session_id = ${attempt.sessionId} AND sequence = ${attempt.sequence}
      RETURNING sequence`).pipe(
      Effect.flatMap((rows) =>
        rows.length === 1
          ? Effect.void
          : Effect.fail(
            new StorageError({ reason: "failure", cause: new Error(`no payment attempt ${attempt.idempotencyKey}`) })
          )
      )
    )

  const seedCoupons = (coupons: ReadonlyArray<{ readonly id: string; readonly timesRedeemed: number }>) => {
    const rows = new Map<string, number>()
    for (const coupon of coupons) if (!rows.has(coupon.id)) rows.set(coupon.id, coupon.timesRedeemed)
    return rows.size === 0 ? Effect.void : run(sql`
      INSERT INTO coupons ${sql.insert([...rows].map(([id, times_redeemed]) => ({ id, times_redeemed })))}
      ON CONFLICT (id) DO NOTHING`).pipe(Effect.asVoid)
  }

  const couponUsage = (couponIds: ReadonlyArray<string>, now: number, forSession: string, lock: boolean) =>
    Effect.gen(function*() {
      const ids = [...new Set(couponIds)].sort()
      const usage = new Map<string, number>()
      if (ids.length === 0) return usage as ReadonlyMap<string, number>
      const rows = yield* run(
        lock
          ? sql<{ id: string; times_redeemed: number }>`
              SELECT id, times_redeemed FROM coupons WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`
          : sql<{ id: string; times_redeemed: number }>`
              SELECT id, times_redeemed FROM coupons WHERE id IN ${sql.in(ids)}`
      )
      if (rows.length === 0) return usage
      // A separate statement, so that it sees what the transactions we waited for committed.
      const held = yield* run(sql<{ coupon_id: string; held: number }>`
        SELECT coupon_id, COUNT(*)::int AS held FROM coupon_holds
        WHERE coupon_id IN ${sql.in(rows.map((row) => row.id))}
          AND session_id <> ${forSession}
          AND expires_at > ${iso(now)}::timestamptz
        GROUP BY coupon_id`)
      for (const row of rows) usage.set(row.id, Number(row.times_redeemed))
      for (const row of held) usage.set(row.coupon_id, (usage.get(row.coupon_id) ?? 0) + Number(row.held))
      return usage
    })

  const holdCoupons = (sessionId: string, couponIds: ReadonlyArray<string>, expiresAt: number) =>
    Effect.gen(function*() {
      yield* run(sql`DELETE FROM coupon_holds WHERE session_id = ${sessionId}`)
      const ids = [...new Set(couponIds)].sort()
      if (ids.length > 0) {
        yield* run(sql`INSERT INTO coupon_holds ${
          sql.insert(ids.map((coupon_id) => ({ coupon_id, session_id: sessionId, expires_at: iso(expiresAt) })))
        }`)
      }
    })

  const redeemCoupons = (sessionId: string) =>
    Effect.gen(function*() {
      const holds = yield* run(sql<{ coupon_id: string }>`
        SELECT coupon_id FROM coupon_holds WHERE session_id = ${sessionId} ORDER BY coupon_id`)
      if (holds.length === 0) return
      const ids = holds.map((row) => row.coupon_id)
      yield* run(sql`SELECT id FROM coupons WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`)
      yield* run(sql`UPDATE coupons SET times_redeemed = times_redeemed + 1 WHERE id IN ${sql.in(ids)}`)
      yield* run(sql`DELETE FROM coupon_holds WHERE session_id = ${sessionId}`)
    })

  const releaseCouponHolds = (sessionId: string) =>
    run(sql`DELETE FROM coupon_holds WHERE session_id = ${sessionId}`).pipe(Effect.asVoid)

  const couponRedemptions = run(sql<{ id: string; times_redeemed: number }>`SELECT id, times_redeemed FROM coupons`)
    .pipe(
      Effect.map((rows) => new Map(rows.map((row) => [row.id, Number(row.times_redeemed)])) as ReadonlyMap<string, number>)
    )

  return CheckoutStore.of({
    seedCoupons,
    couponUsage,
    holdCoupons,
    redeemCoupons,
    releaseCouponHolds,
    couponRedemptions,
    lockSessionForPayment,
    updateSessionAndAttempt,
    completePaidSessionIfUnchanged,
    updatePaymentAttempt,
    transaction,
    getSession,
    getSessionJson,
    lockSession,
    insertSession,
    updateSession,
    insertSessionIfAvailable,
    updateSessionKeepingReservations,
    getSessionVersion,
    updateSessionKeepingReservationsIfUnchanged,
    lockStock,
    setReservations,
    consumeReservations,
    releaseReservations,
    findExpiredSessionIds,
    seedStock,
    stockLevels,
    ping
  })
})

/** `CheckoutStore` over the `SqlClient` in context (migrated with `./migrations.ts`). */
export const SqlCheckoutStore: Layer.Layer<CheckoutStore, never, SqlClient.SqlClient> = Layer.effect(
  CheckoutStore,
  make
)
