/**
 * `CheckoutStore` over an `@effect/sql` client speaking PostgreSQL (real PostgreSQL through
 * `@effect/sql-pg`, or the embedded PGlite behind its socket server).
 *
 * Concurrency is handled by row locks, in the default READ COMMITTED isolation:
 * - `lockSession` is `SELECT … FOR UPDATE` on the session row; a second transaction on the same
 *   session waits there until the first commits, then reads the committed row;
 * - `lockStock` locks the stock rows in product-id order (so two transactions never deadlock),
 *   then, in a *second* statement, sums the live reservations of other sessions. The sum must be a
 *   separate statement: a READ COMMITTED statement reads with the snapshot taken when it started,
 *   so an aggregate in the locking statement would miss reservations committed by the transaction
 *   it waited for;
 * - `findExpiredSessionIds` uses `FOR UPDATE SKIP LOCKED`, so several sweepers share the work.
 * The `version` column is bumped on each update for diagnostics; it is not used for optimistic
 * locking.
 *
 * `transaction` is `sql.withTransaction`: the outermost call is BEGIN/COMMIT, nested calls are
 * savepoints (a failing inner call rolls back only its own writes), and every statement run inside
 * uses the transaction's connection.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Layer, Option, ParseResult, Schema } from "effect"
import { Order } from "../domain/checkout.ts"
import { Session } from "../domain/session-model.ts"
import {
  CheckoutStore,
  type CheckoutStoreService,
  type PaymentAttempt,
  type StockLevel,
  StorageError,
  type StoredOrder
} from "./checkout-store.ts"

// ---------------------------------------------------------------------------------------------
// Error mapping

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  // PostgreSQL SQLSTATEs: admin/crash/cannot-connect-now shutdown, too many connections
  "57P01",
  "57P02",
  "57P03",
  "53300"
])

const CONNECTION_MESSAGES = [
  "connection terminated",
  "failed to acquire connection",
  "connection error",
  "failed to connect",
  "connection timed out",
  "timeout exceeded when trying to connect",
  "client has encountered a connection error",
  "too many connections",
  "not queryable"
]

/** Whether `error` (or anything in its cause chain) says the database could not be reached. */
export const isConnectionProblem = (error: unknown): boolean => {
  const seen = new Set<unknown>()
  const visit = (e: unknown): boolean => {
    if (e === null || typeof e !== "object" || seen.has(e)) return false
    seen.add(e)
    const record = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
    if (typeof record.code === "string" && (CONNECTION_CODES.has(record.code) || /^08[0-9A-Z]{3}$/.test(record.code))) {
      return true
    }
    if (typeof record.message === "string") {
      const message = record.message.toLowerCase()
      if (CONNECTION_MESSAGES.some((m) => message.includes(m))) return true
    }
    if (Array.isArray(record.errors) && record.errors.some(visit)) return true
    return visit(record.cause)
  }
  return visit(error)
}

/** SqlError → StorageError "unavailable" (connection problems) or "failure" (everything else). */
export const fromSqlError = (error: SqlError.SqlError): StorageError =>
  new StorageError({ reason: isConnectionProblem(error) ? "unavailable" : "failure", cause: error })

const fromParseError = (error: ParseResult.ParseError): StorageError =>
  new StorageError({ reason: "failure", cause: error })

// ---------------------------------------------------------------------------------------------
// Rows

const decodeSession = Schema.decodeUnknown(Session)
const decodeOrder = Schema.decodeUnknown(Order)

/** The stored JSON is the session as typed: the schema has no transformations (checked here). */
const sessionJson = (session: Session): string => {
  const encoded: typeof Session.Encoded = session
  return JSON.stringify(encoded)
}
const orderJson = (order: Order): string => {
  const encoded: typeof Order.Encoded = order
  return JSON.stringify(encoded)
}

const iso = (epochMillis: number): string => new Date(epochMillis).toISOString()

/** `jsonb` arrives parsed from node-postgres; accept text too, for other drivers. */
const jsonValue = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

const SqlErrorClass = SqlError.SqlError

class Inner<E> {
  constructor(readonly error: E) {}
}

/**
 * `sql.withTransaction` with the store's error rules, shared by every SQL store (they all use one
 * `SqlClient`, so a call inside another store's transaction becomes a savepoint of it):
 * - the effect's own failures are wrapped on the way through, so that a SqlError of BEGIN (or a
 *   savepoint) is told apart from them; `withTransaction` turns a failing COMMIT or ROLLBACK into
 *   a defect (e.g. the connection was lost): those become StorageError too;
 * - uninterruptible: a transaction runs to its COMMIT or ROLLBACK even when its request is
 *   interrupted (client gone). Interrupting a statement makes @effect/sql-pg cancel it through
 *   another pool connection while the transaction keeps its own, row locks held; under load the
 *   pool filled with transactions waiting on those locks and everything stalled (bench, issue 9).
 */
export const sqlTransaction = (sql: SqlClient.SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
  effect.pipe(
    Effect.mapError((error) => new Inner(error)),
    sql.withTransaction,
    Effect.catchAll((error) => Effect.fail(error instanceof Inner ? error.error : fromSqlError(error))),
    Effect.catchSomeDefect((defect) =>
      defect instanceof SqlErrorClass ? Option.some(Effect.fail(fromSqlError(defect))) : Option.none()
    ),
    Effect.uninterruptible
  )

// ---------------------------------------------------------------------------------------------

export const make: Effect.Effect<CheckoutStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const run = <A>(effect: Effect.Effect<A, SqlError.SqlError>): Effect.Effect<A, StorageError> =>
    Effect.mapError(effect, fromSqlError)

  const sessionFromRow = (row: { readonly data: unknown } | undefined) =>
    row === undefined
      ? Effect.succeed(Option.none<Session>())
      : Effect.try({ try: () => jsonValue(row.data), catch: (cause) => new StorageError({ reason: "failure", cause }) })
        .pipe(
          Effect.flatMap((json) => Effect.mapError(decodeSession(json), fromParseError)),
          Effect.map(Option.some)
        )

  const transaction: CheckoutStoreService["transaction"] = sqlTransaction(sql)

  const getSession = (id: string) =>
    run(sql<{ data: unknown }>`SELECT data FROM checkout_sessions WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) => sessionFromRow(rows[0]))
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

  const updateSession = (session: Session) =>
    run(sql<{ id: string }>`
      UPDATE checkout_sessions
      SET status = ${session.status}, data = ${sessionJson(session)}::jsonb,
          expires_at = ${session.expires_at}::timestamptz, updated_at = ${session.updated_at}::timestamptz,
          version = version + 1
      WHERE id = ${session.id}
      RETURNING id`).pipe(
      Effect.flatMap((rows) =>
        rows.length === 1
          ? Effect.void
          : Effect.fail(
            new StorageError({ reason: "failure", cause: new Error(`updateSession: no session ${session.id}`) })
          )
      )
    )

  const lockStock = (productIds: ReadonlyArray<string>, now: number, forSession: string) =>
    Effect.gen(function*() {
      const ids = [...new Set(productIds)].sort()
      const available = new Map<string, number>()
      if (ids.length === 0) return available as ReadonlyMap<string, number>
      const locked = yield* run(sql<{ product_id: string; on_hand: number }>`
        SELECT product_id, on_hand FROM stock
        WHERE product_id IN ${sql.in(ids)}
        ORDER BY product_id
        FOR UPDATE`)
      if (locked.length === 0) return available
      // A separate statement, so that it sees what the transactions we waited for committed.
      const held = yield* run(sql<{ product_id: string; held: number }>`
        SELECT product_id, SUM(quantity)::int AS held FROM reservations
        WHERE product_id IN ${sql.in(locked.map((row) => row.product_id))}
          AND session_id <> ${forSession}
          AND expires_at > ${iso(now)}::timestamptz
        GROUP BY product_id`)
      for (const row of locked) available.set(row.product_id, Number(row.on_hand))
      for (const row of held) {
        const onHand = available.get(row.product_id)
        if (onHand !== undefined) available.set(row.product_id, onHand - Number(row.held))
      }
      return available
    })

  const setReservations = (sessionId: string, reservations: ReadonlyMap<string, number>, expiresAt: number) =>
    Effect.gen(function*() {
      yield* run(sql`DELETE FROM reservations WHERE session_id = ${sessionId}`)
      const rows = [...reservations]
        .filter(([, quantity]) => quantity > 0)
        .map(([product_id, quantity]) => ({
          session_id: sessionId,
          product_id,
          quantity,
          expires_at: iso(expiresAt)
        }))
      if (rows.length > 0) yield* run(sql`INSERT INTO reservations ${sql.insert(rows)}`)
    })

  const consumeReservations = (sessionId: string) =>
    Effect.zipRight(
      // Lock the stock rows in product-id order first, as `lockStock` does: the UPDATE below locks
      // them in join order, which deadlocked against a concurrent create/update (bench, issue 9).
      run(sql`
        SELECT product_id FROM stock
        WHERE product_id IN (SELECT product_id FROM reservations WHERE session_id = ${sessionId})
        ORDER BY product_id
        FOR UPDATE`),
      run(sql`
        WITH consumed AS (
          DELETE FROM reservations WHERE session_id = ${sessionId} RETURNING product_id, quantity
        )
        UPDATE stock SET on_hand = stock.on_hand - consumed.quantity
        FROM consumed
        WHERE stock.product_id = consumed.product_id`)
    ).pipe(Effect.asVoid)

  const releaseReservations = (sessionId: string) =>
    run(sql`DELETE FROM reservations WHERE session_id = ${sessionId}`).pipe(Effect.asVoid)

  const insertOrder = (stored: StoredOrder) =>
    run(sql`
      INSERT INTO orders (id, checkout_session_id, data, created_at)
      VALUES (${stored.order.id}, ${stored.sessionId}, ${orderJson(stored.order)}::jsonb,
              ${iso(stored.createdAt)}::timestamptz)`).pipe(Effect.asVoid)

  const getOrder = (id: string) =>
    run(sql<{ checkout_session_id: string; data: unknown; created_ms: number | string }>`
      SELECT checkout_session_id, data, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
      FROM orders WHERE id = ${id}`).pipe(
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(Option.none<StoredOrder>())
        return Effect.try({
          try: () => jsonValue(row.data),
          catch: (cause) => new StorageError({ reason: "failure", cause })
        }).pipe(
          Effect.flatMap((json) => Effect.mapError(decodeOrder(json), fromParseError)),
          Effect.map((order) =>
            Option.some<StoredOrder>({
              order,
              sessionId: row.checkout_session_id,
              createdAt: Math.round(Number(row.created_ms))
            })
          )
        )
      })
    )

  const findExpiredSessionIds = (now: number, limit: number) =>
    limit <= 0
      ? Effect.succeed([])
      : run(sql<{ id: string }>`
          SELECT id FROM checkout_sessions
          WHERE status IN ('not_ready_for_payment', 'ready_for_payment', 'authentication_required')
            AND expires_at <= ${iso(now)}::timestamptz
          ORDER BY expires_at
          LIMIT ${Math.floor(limit)}
          FOR UPDATE SKIP LOCKED`).pipe(Effect.map((rows) => rows.map((row) => row.id)))

  const seedStock = (products: ReadonlyArray<{ readonly id: string; readonly stock: number }>) => {
    const rows = new Map<string, number>()
    for (const product of products) if (!rows.has(product.id)) rows.set(product.id, product.stock)
    return rows.size === 0 ? Effect.void : run(sql`
      INSERT INTO stock ${sql.insert([...rows].map(([product_id, on_hand]) => ({ product_id, on_hand })))}
      ON CONFLICT (product_id) DO NOTHING`).pipe(Effect.asVoid)
  }

  const stockLevels = (now: number) =>
    run(sql<{ product_id: string; on_hand: number; reserved: number }>`
      SELECT s.product_id, s.on_hand, COALESCE(SUM(r.quantity), 0)::int AS reserved
      FROM stock s
      LEFT JOIN reservations r ON r.product_id = s.product_id AND r.expires_at > ${iso(now)}::timestamptz
      GROUP BY s.product_id, s.on_hand
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

  const latestPaymentAttempt = (sessionId: string) =>
    run(sql<AttemptRow>`
      SELECT session_id, sequence, idempotency_key, amount, currency, credential_ref, state, charge_id,
             (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
             (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms
      FROM payment_attempts WHERE session_id = ${sessionId}
      ORDER BY sequence DESC LIMIT 1`).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), attemptFromRow))
    )

  const insertPaymentAttempt = (attempt: PaymentAttempt) =>
    run(sql`
      INSERT INTO payment_attempts (session_id, sequence, idempotency_key, amount, currency, credential_ref,
                                    state, charge_id, created_at, updated_at)
      VALUES (${attempt.sessionId}, ${attempt.sequence}, ${attempt.idempotencyKey}, ${attempt.amount},
              ${attempt.currency}, ${attempt.credentialRef}, ${attempt.state}, ${attempt.chargeId ?? null},
              ${iso(attempt.createdAt)}::timestamptz, ${iso(attempt.updatedAt)}::timestamptz)`).pipe(Effect.asVoid)

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
    latestPaymentAttempt,
    insertPaymentAttempt,
    updatePaymentAttempt,
    transaction,
    getSession,
    lockSession,
    insertSession,
    updateSession,
    lockStock,
    setReservations,
    consumeReservations,
    releaseReservations,
    insertOrder,
    getOrder,
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
