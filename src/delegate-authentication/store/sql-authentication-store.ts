/** `AuthenticationStore` over PostgreSQL (`authentication_sessions`, migration 0015), the session as checked JSON. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { sqlTransaction } from "../../db/sql-transaction.ts"
import { iso, jsonValue } from "../../db/sql-values.ts"
import { statementRunner } from "../../db/statement-runner.ts"
import { StorageError } from "../../db/storage-error.ts"
import { isStorableText } from "../../shared/storable-text.ts"
import { AuthenticationStore, type AuthenticationStoreService } from "../authentication-store.ts"
import { type AuthenticationSession, AuthenticationStatus } from "../model/authentication-session.ts"

const opt = Schema.optional
const Stored = Schema.Struct({
  id: Schema.String,
  clientKeyId: Schema.String,
  merchantId: Schema.String,
  checkoutSessionId: opt(Schema.String),
  amount: Schema.Int,
  currency: Schema.String,
  card: Schema.Struct({ fingerprint: Schema.String, brand: Schema.String, last4: Schema.String }),
  scenario: Schema.Literal("frictionless", "attempted", "challenge", "fails", "not_enrolled"),
  acquirerDetails: opt(Schema.Struct({
    acquirer_bin: Schema.String,
    acquirer_country: Schema.String,
    acquirer_merchant_id: Schema.String,
    merchant_name: Schema.String,
    requestor_id: opt(Schema.String)
  })),
  channelGiven: Schema.Boolean,
  challengeNotificationUrl: opt(Schema.String),
  status: AuthenticationStatus,
  action: opt(Schema.Literal("fingerprint", "challenge")),
  threeDsServerTransId: Schema.String,
  acsTransId: Schema.String,
  dsTransId: Schema.String,
  result: opt(Schema.Struct({
    transStatus: Schema.Literal("Y", "A", "N", "R", "U"),
    eci: opt(Schema.String),
    cryptogram: opt(Schema.String),
    transStatusReason: opt(Schema.String),
    cardholderInfo: opt(Schema.String)
  })),
  createdAt: Schema.Number,
  expiresAt: Schema.Number,
  usedBySession: opt(Schema.String)
})
const decodeStored = Schema.decodeUnknown(Stored)

/** Absent keys read back as `undefined`, which is what the session's `X | undefined` fields hold. */
const sessionFromData = (data: unknown): Effect.Effect<AuthenticationSession, StorageError> =>
  decodeStored(jsonValue(data)).pipe(
    Effect.map((session) => session as unknown as AuthenticationSession),
    Effect.mapError((cause) => new StorageError({ reason: "failure", cause }))
  )

export const make: Effect.Effect<AuthenticationStoreService, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)
  const one = (rows: ReadonlyArray<{ readonly data: unknown }>) =>
    rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(sessionFromData(rows[0].data), Option.some)
  const data = (session: AuthenticationSession) => JSON.stringify(session)

  return AuthenticationStore.of({
    transaction: sqlTransaction(sql),
    insert: (session) =>
      run(sql`
        INSERT INTO authentication_sessions (id, ds_trans_id, status, action, used_by_session, expires_at, data)
        VALUES (${session.id}, ${session.dsTransId}, ${session.status}, ${session.action ?? null},
                ${session.usedBySession ?? null}, ${iso(session.expiresAt)}::timestamptz, ${data(session)}::jsonb)`)
        .pipe(Effect.asVoid),
    // The id is the client's text: one PostgreSQL cannot hold (a NUL) is no session, as in memory, not a failure.
    get: (id) =>
      isStorableText(id)
        ? run(sql<{ data: unknown }>`SELECT data FROM authentication_sessions WHERE id = ${id}`).pipe(
          Effect.flatMap(one)
        )
        : Effect.succeedNone,
    findByDsTransId: (dsTransId) =>
      run(sql<{ data: unknown }>`SELECT data FROM authentication_sessions WHERE ds_trans_id = ${dsTransId}`).pipe(
        Effect.flatMap(one)
      ),
    // Of two concurrent steps the second waits for the first's row lock, re-checks and changes nothing.
    update: (session, expected) =>
      run(sql<{ id: string }>`
        UPDATE authentication_sessions
        SET status = ${session.status}, action = ${session.action ?? null}, data = ${data(session)}::jsonb
        WHERE id = ${session.id} AND status = ${expected.status}
          AND action IS NOT DISTINCT FROM ${expected.action ?? null}
        RETURNING id`).pipe(Effect.map((rows) => rows.length === 1)),
    markUsed: (id, checkoutSessionId) =>
      run(sql<{ id: string }>`
        UPDATE authentication_sessions
        SET used_by_session = ${checkoutSessionId},
            data = jsonb_set(data, '{usedBySession}', to_jsonb(${checkoutSessionId}::text))
        WHERE id = ${id} AND (used_by_session IS NULL OR used_by_session = ${checkoutSessionId})
        RETURNING id`).pipe(Effect.map((rows) => rows.length === 1))
  })
})

export const SqlAuthenticationStore: Layer.Layer<AuthenticationStore, never, SqlClient.SqlClient> = Layer.effect(
  AuthenticationStore,
  make
)
