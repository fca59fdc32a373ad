/**
 * Security: a card number and cvc sent to the vault never appear in any log line (at every log
 * level), any response, or any stored row — in memory, on embedded PGlite and on PostgreSQL
 * (`TEST_DATABASE_URL`). Bad requests that contain the number do not echo it either.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, HashMap, Layer, List, Logger, LogLevel, Option } from "effect"
import { inspect } from "node:util"
import { SqlCheckoutStore } from "../../src/checkout/store/sql-checkout-store.ts"
import { SqlVaultStore } from "../../src/delegate-payment/store/sql-vault-store.ts"
import { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import { SqlIdempotencyStore } from "../../src/idempotency/store/sql-idempotency-store.ts"
import { API_VERSION_NAMES, type ApiVersionName } from "../../src/shared/api-versions.ts"
import { freshMemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import {
  CARD_CVC,
  CARD_NUMBER,
  DELEGATE_PATH,
  delegateRequestWith,
  NoPayments,
  validDelegateRequest
} from "../support/delegate.ts"
import { post, testApp } from "../support/http.ts"
import { embeddedDatabase, hasPostgres, postgresDatabase, type TestDatabase } from "../support/test-database.ts"

const MIDDLE_DIGITS = CARD_NUMBER.slice(6, 12)

/** Timestamps (whose milliseconds could spell the cvc) are masked before looking for it. */
const maskTimestamps = (text: string) =>
  text.replace(/\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:?\d{2})?)?/g, "<timestamp>")

/** The cvc as a value of its own (not inside a longer run of digits or hex). */
const containsCvc = (text: string) =>
  new RegExp(`(^|[^0-9A-Za-z])${CARD_CVC}([^0-9A-Za-z]|$)`).test(maskTimestamps(text))

/** A card number masked as PCI DSS allows (first 6, last 4): its first 6 are this card's middle ones. */
const MASKED = /\d{6}\*{3,9}\d{4}/g

const expectNoCardData = (what: string, text: string) => {
  expect(text.includes(CARD_NUMBER), `${what} contains the card number`).toBe(false)
  expect(text.replace(MASKED, "<masked>").includes(MIDDLE_DIGITS), `${what} contains the middle digits`).toBe(false)
  expect(containsCvc(text), `${what} contains the cvc`).toBe(false)
}

/** A logger keeping every line: level, message, annotations, spans and cause, fully rendered. */
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, cause, logLevel, message, spans }) => {
    lines.push(
      [
        logLevel.label,
        inspect(message, { depth: 20 }),
        inspect(HashMap.toEntries(annotations), { depth: 20 }),
        List.toArray(spans).map((span) => span.label).join(","),
        Cause.isEmpty(cause) ? "" : Cause.pretty(cause, { renderErrorCause: true })
      ].join(" | ")
    )
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Every row of every table in `public`, as text (`SELECT t::text FROM t`). */
const dumpAllTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`
  const parts: Array<string> = []
  for (const { table_name } of tables) {
    const rows = yield* sql.unsafe<{ row: string }>(
      `SELECT t::text AS row FROM "${table_name.replaceAll("\"", "\"\"")}" t`
    )
    parts.push(`${table_name}: ${rows.map((r) => r.row).join("\n")}`)
  }
  return { tables: tables.map((t) => t.table_name), text: parts.join("\n") }
})

/**
 * Tokenizes once, then sends bad requests that carry the number; returns every response text. In
 * `version` (2025-09-29 by default), each request with its own Idempotency-Key (2026-04-17 requires one).
 */
const exercise = (version: ApiVersionName = "2025-09-29") =>
  Effect.gen(function*() {
    const texts: Array<string> = []
    let keys = 0
    const send = (body: unknown) =>
      post(DELEGATE_PATH, body, { version, headers: { "idempotency-key": `leak-${version}-${++keys}` } })
    const ok = yield* send(validDelegateRequest())
    expect(ok.status).toBe(201)
    const headers: Array<string> = []
    ok.headers.forEach((value, name) => headers.push(`${name}: ${value}`))
    texts.push(ok.text, headers.join("\n"))
    const bad: ReadonlyArray<readonly [number, unknown]> = [
      [422, delegateRequestWith((r) => (r.payment_method.exp_year = "2020"))], // expired, valid number
      [422, delegateRequestWith((r) => (r.payment_method.iin = "555555"))],
      [422, delegateRequestWith((r) => r.risk_signals.push({ type: "card_testing", score: 99, action: "blocked" }))],
      [400, delegateRequestWith((r) => (r.payment_method.cvc = `${CARD_CVC}x`))],
      [400, delegateRequestWith((r) => (r.payment_method.number = `${CARD_NUMBER}0000`))], // 20 digits
      [400, delegateRequestWith((r) => (r.payment_method.number = Number(CARD_NUMBER)))], // a number, not a string
      [400, delegateRequestWith((r) => (r.payment_method.exp_month = CARD_NUMBER))],
      [400, delegateRequestWith((r) => (r.metadata = { note: 4242424242424242 }))],
      // Outside payment_method.number: refused, never kept in clear.
      [400, delegateRequestWith((r) => (r.metadata = { card: CARD_NUMBER, cvc: CARD_CVC }))],
      [400, delegateRequestWith((r) => (r.metadata = { [CARD_NUMBER]: "x" }))],
      [400, delegateRequestWith((r) => (r.metadata = { [CARD_NUMBER]: 1 }))],
      [400, delegateRequestWith((r) => (r.payment_method.display_brand = CARD_NUMBER))],
      [400, `{"payment_method":{"number":"${CARD_NUMBER}","cvc":"${CARD_CVC}"`] // malformed JSON
    ]
    for (const [status, body] of bad) {
      const response = yield* send(body)
      expect(response.status).toBe(status)
      texts.push(response.text)
    }
    return { tokenId: ok.body.id as string, responses: texts.join("\n") }
  })

const runCaptured = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const logs = captureLogs()
  return Effect.map(
    effect.pipe(Logger.withMinimumLogLevel(LogLevel.All), Effect.provide(logs.layer)),
    (result) => ({ result, logs: logs.lines })
  )
}

describe("the card never leaks", () => {
  it.live("in memory: logs at every level, responses, the stored record", () =>
    Effect.gen(function*() {
      const { logs, result } = yield* runCaptured(exercise())
      expect(logs.some((line) => line.includes("card tokenized"))).toBe(true) // the capture works
      expect(logs.some((line) => line.includes(`POST ${DELEGATE_PATH} 201`))).toBe(true)
      expectNoCardData("logs", logs.join("\n"))
      expectNoCardData("responses", result.responses)
      const record = Option.getOrThrow(yield* (yield* VaultStore).getToken(result.tokenId))
      expect(record.last4).toBe("4242")
      expectNoCardData("stored record", JSON.stringify(record))
    }).pipe(Effect.provide(
      Layer.merge(testApp({ payments: NoPayments, vaultStore: MemoryVaultStore }), MemoryVaultStore).pipe(
        Layer.provide(freshMemoryDatabase)
      )
    )))

  it.live("in memory, in every API version: logs at every level and responses", () =>
    Effect.gen(function*() {
      for (const version of API_VERSION_NAMES) {
        const { logs, result } = yield* runCaptured(exercise(version))
        expect(logs.some((line) => line.includes("card tokenized"))).toBe(true)
        expectNoCardData(`logs (${version})`, logs.join("\n"))
        expectNoCardData(`responses (${version})`, result.responses)
      }
    }).pipe(Effect.provide(
      testApp({ payments: NoPayments, vaultStore: MemoryVaultStore }).pipe(Layer.provide(freshMemoryDatabase))
    )))

  const onDatabase = (name: string, database: () => TestDatabase) =>
    it.live(`${name}: logs at every level, responses, a dump of every table`, () => {
      const db = database()
      const app = Layer.mergeAll(
        testApp({
          payments: NoPayments,
          store: SqlCheckoutStore.pipe(Layer.provide(db)),
          vaultStore: SqlVaultStore.pipe(Layer.provide(db)),
          // The keys' answers go in the tokens' statements: one database, as in production.
          idempotencyStore: SqlIdempotencyStore.pipe(Layer.provide(db))
        }),
        db
      )
      return Effect.gen(function*() {
        const { logs, result } = yield* runCaptured(exercise())
        expect(logs.some((line) => line.includes("card tokenized"))).toBe(true)
        expectNoCardData("logs", logs.join("\n"))
        expectNoCardData("responses", result.responses)
        const dump = yield* dumpAllTables
        expect(dump.tables).toContain("vault_tokens")
        expect(dump.text).toContain(result.tokenId) // the dump holds the token row
        expect(dump.text).toContain("4242") // last4, allowed in clear
        expectNoCardData("database dump", dump.text)
      }).pipe(Effect.provide(app))
    }, 120_000)

  onDatabase("embedded PGlite", () => embeddedDatabase())
  describe.skipIf(!hasPostgres)("PostgreSQL (TEST_DATABASE_URL)", () => {
    onDatabase("PostgreSQL", () => postgresDatabase())
  })
})
