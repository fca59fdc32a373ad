/**
 * `CheckoutStore` over an `@effect/sql` PostgreSQL client: the aggregates' stores, and here the
 * steps that write several, each one statement where it can be. Row locks in READ COMMITTED
 * (`docs/concurrency.md`); nested `transaction` calls are savepoints.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { answeringError, storeAnswerCall } from "../../db/functions/idempotency-store-answer.ts"
import { orderSaveArguments } from "../../db/functions/order-save-with-event.ts"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso, jsonValue } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import type { AnswerToStore } from "../../idempotency/idempotent-answer.ts"
import { encodeOrderChange } from "../../orders/order-store.ts"
import { CheckoutStore, type CheckoutStoreService, type SessionForPayment } from "../checkout-store.ts"
import { type PaymentAttempt } from "../payment/attempt.ts"
import type { SessionStatus } from "../session/schemas.ts"
import type { Session } from "../session/session.ts"
import { holdsUntil } from "../session/view.ts"
import { makeWrittenSessions } from "../written-sessions.ts"
import { makeSqlCouponStore } from "./sql-coupon-store.ts"
import { makeSqlInventoryStore, reservationArrays } from "./sql-inventory-store.ts"
import { attemptFromRow, type AttemptRow, makeSqlPaymentAttemptStore } from "./sql-payment-attempt-store.ts"
import { sessionDocuments, sessionFromRow } from "./sql-session-row.ts"
import { makeSqlSessionStore, sessionAssignments, updatedVersion } from "./sql-session-store.ts"

export const make: Effect.Effect<CheckoutStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)
  const runAnswering = statementRunner(sql, answeringError)
  const transaction: CheckoutStoreService["transaction"] = sqlTransaction(sql)
  const sessions = makeSqlSessionStore(sql)
  const inventory = makeSqlInventoryStore(sql, transaction)

  // One statement: the answer is stored only when `checkout_create_session` inserted (a lost claim
  // raises, and nothing is written).
  const createSessionReservingStock: CheckoutStoreService["createSessionReservingStock"] = (
    transition,
    now,
    answer
  ) => {
    const { session } = transition
    const { products, quantities } = reservationArrays(transition.reservations)
    const create = sql`checkout_create_session(
        ${session.id}, ${session.status}, ${sessionDocuments(sql, session)}, ${session.expires_at}::timestamptz,
        ${session.created_at}::timestamptz, ${session.updated_at}::timestamptz,
        ${products}::text[], ${quantities}::int[], ${iso(holdsUntil(session))}::timestamptz, ${iso(now)}::timestamptz
      )`
    const statement = answer === undefined
      ? sql<{ inserted: boolean }>`SELECT ${create} AS inserted`
      : sql<{ inserted: boolean }>`SELECT CASE WHEN ${create} THEN ${storeAnswer(answer)} ELSE false END AS inserted`
    return runAnswering(statement).pipe(Effect.map((rows) => rows[0]?.inserted === true))
  }

  const storeAnswer = (answer: AnswerToStore) => storeAnswerCall(sql, answer)

  // One statement; quantities, and so the stock counters, unchanged.
  const updateSessionKeepingItems: CheckoutStoreService["updateSessionKeepingItems"] = (session, version, answer) => {
    const update = sql`
      updated AS (
        UPDATE checkout_sessions SET ${sessionAssignments(sql, session)}
        WHERE id = ${session.id} AND version = ${version}
        RETURNING id
      ), moved AS (
        UPDATE reservations SET expires_at = ${iso(holdsUntil(session))}::timestamptz
        WHERE session_id = (SELECT id FROM updated) AND expires_at <> ${iso(holdsUntil(session))}::timestamptz
      )`
    const statement = answer === undefined
      ? sql<{ id: string }>`WITH ${update} SELECT id FROM updated`
      : sql<{ id: string }>`
        WITH ${update}, answered AS MATERIALIZED (SELECT ${storeAnswer(answer)} AS stored FROM updated)
        SELECT id FROM updated CROSS JOIN answered`
    return runAnswering(statement).pipe(Effect.map((rows) => rows.length === 1))
  }

  const updateSessionAndReservations: CheckoutStoreService["updateSessionAndReservations"] = (
    { reservations, session }
  ) =>
    Effect.zipRight(
      sessions.update(session),
      reservations.size === 0
        ? inventory.releaseReservations(session.id)
        : inventory.setReservations(session.id, reservations, holdsUntil(session))
    )

  const lockExpired = Effect.fnUntraced(function*(statuses: ReadonlyArray<SessionStatus>, now: number, limit: number) {
    const rows = yield* run(sql<{ id: string }>`
      SELECT id FROM checkout_sessions
      WHERE status = ANY (${statuses}::text[]) AND expires_at <= ${iso(now)}::timestamptz
      ORDER BY expires_at
      LIMIT ${Math.floor(limit)}
      FOR UPDATE SKIP LOCKED`)
    const ids = rows.map((row) => row.id)
    // Each release then locks its shards (or stock rows without shards): all locked now, each kind
    // in one ascending pass, so that the sweep never locks out of order. Outside a transaction the
    // locks would end with the statement.
    if (ids.length > 0 && Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))) {
      yield* run(sql`
        SELECT h.product_id FROM stock_shards h
        WHERE (h.product_id, h.shard) IN (
          SELECT r.product_id, stock_shard_of(r.session_id) FROM reservations r
          WHERE r.session_id = ANY (${ids}::text[])
        )
        ORDER BY h.product_id, h.shard
        FOR UPDATE`)
      yield* run(sql`
        SELECT s.product_id FROM stock s
        WHERE s.product_id IN (SELECT product_id FROM reservations WHERE session_id = ANY (${ids}::text[]))
          AND NOT EXISTS (SELECT FROM stock_shards h WHERE h.product_id = s.product_id)
        ORDER BY s.product_id
        FOR UPDATE`)
    }
    return ids
  })

  const lockExpiredSessions: CheckoutStoreService["lockExpiredSessions"] = (statuses, now, limit) =>
    limit <= 0
      ? Effect.succeed([])
      : lockExpired(statuses, now, limit)

  const sessionForPayment = (id: string, lock: boolean) =>
    run(
      sql<
        {
          out_data: unknown
          out_internal: unknown
          out_version: number | string
          out_attempt: unknown
          out_coupon_holds: ReadonlyArray<string> | null
        }
      >`
      SELECT out_data, out_internal, out_version, out_attempt, out_coupon_holds FROM checkout_session_for_payment(${id}, ${lock})`
    ).pipe(
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(Option.none<SessionForPayment>())
        return Effect.map(
          sessionFromRow({ data: row.out_data, internal: row.out_internal }),
          (session) =>
            Option.map(session, (session): SessionForPayment => ({
              session,
              version: Number(row.out_version),
              latestAttempt: row.out_attempt === null || row.out_attempt === undefined
                ? Option.none()
                : Option.some(attemptFromRow(jsonValue(row.out_attempt) as AttemptRow)),
              couponHolds: row.out_coupon_holds ?? []
            }))
        )
      })
    )

  // All or nothing: the attempt is inserted only for the row written; a duplicate fails the statement.
  const writeSessionWithAttempt = (session: Session, attempt: PaymentAttempt, version: number | undefined) =>
    run(sql<{ version: number | string }>`
      WITH updated AS (
        UPDATE checkout_sessions SET ${sessionAssignments(sql, session)}
        WHERE id = ${session.id} AND ${version === undefined ? sql`TRUE` : sql`version = ${version}`}
        RETURNING version
      ), attempt AS (
        INSERT INTO payment_attempts (session_id, sequence, idempotency_key, amount, currency, credential_ref,
                                      state, charge_id, created_at, updated_at)
        SELECT ${attempt.sessionId}, ${attempt.sequence}, ${attempt.idempotencyKey}, ${attempt.amount},
               ${attempt.currency}, ${attempt.credentialRef}, ${attempt.state}, ${attempt.chargeId ?? null},
               ${iso(attempt.createdAt)}::timestamptz, ${iso(attempt.updatedAt)}::timestamptz
        FROM updated
      )
      SELECT version FROM updated`)

  const startPaymentAttempt: CheckoutStoreService["startPaymentAttempt"] = (session, attempt) =>
    writeSessionWithAttempt(session, attempt, undefined).pipe(Effect.flatMap(updatedVersion(session)))

  const startPaymentAttemptAt: CheckoutStoreService["startPaymentAttemptAt"] = (session, attempt, version) =>
    writeSessionWithAttempt(session, attempt, version).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => Number(row.version)))
    )

  // One statement: the answer is stored only when `checkout_complete_paid` wrote (it answers null if not).
  const completePaidCheckout: CheckoutStoreService["completePaidCheckout"] = (completion, answer) => {
    const { session } = completion
    const complete = sql`checkout_complete_paid(
        ${session.id}, ${completion.version}, ${session.status}, ${sessionDocuments(sql, session)},
        ${session.expires_at}::timestamptz, ${session.updated_at}::timestamptz, ${completion.attemptSequence},
        ${completion.chargeId}, ${iso(completion.now)}::timestamptz, ${
      orderSaveArguments(sql, encodeOrderChange(completion.order))
    }
      )`
    const statement = answer === undefined
      ? sql<{ written: boolean }>`SELECT ${complete} IS NOT NULL AS written`
      : sql<{ written: boolean }>`
        SELECT CASE WHEN ${complete} IS NOT NULL THEN ${storeAnswer(answer)} ELSE false END AS written`
    return runAnswering(statement).pipe(Effect.map((rows) => rows[0]?.written === true))
  }

  return CheckoutStore.of({
    written: makeWrittenSessions(),
    transaction,
    ping: run(sql`SELECT 1`).pipe(Effect.asVoid),
    sessions,
    inventory,
    paymentAttempts: makeSqlPaymentAttemptStore(sql),
    coupons: makeSqlCouponStore(sql),
    createSessionReservingStock,
    updateSessionKeepingItems,
    updateSessionAndReservations,
    lockExpiredSessions,
    sessionsWithPaymentPendingSince: (before, limit) =>
      limit <= 0
        ? Effect.succeed([])
        : run(sql<{ session_id: string }>`
          SELECT session_id FROM payment_attempts
          WHERE state = 'pending' AND created_at <= ${iso(before)}::timestamptz
          ORDER BY created_at
          LIMIT ${Math.floor(limit)}`).pipe(Effect.map((rows) => rows.map((row) => row.session_id))),
    lockSessionForPayment: (id) => sessionForPayment(id, true),
    readSessionForPayment: (id) => sessionForPayment(id, false),
    startPaymentAttempt,
    startPaymentAttemptAt,
    completePaidCheckout
  })
})

/** Over the `SqlClient` in context, migrated with `src/db/migrations/`. */
export const SqlCheckoutStore: Layer.Layer<CheckoutStore, never, SqlClient.SqlClient> = Layer.effect(
  CheckoutStore,
  make
)
