/**
 * Real server processes on one PostgreSQL database, killed with SIGKILL, then retried with the
 * same Idempotency-Keys on a new process: the retry replays what the dead process committed, and
 * no session, order or charge exists that no client can learn about. Needs TEST_DATABASE_URL;
 * reports itself skipped without it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { address, buyer, paymentData } from "../support/http.ts"
import {
  callServer,
  databaseClient,
  freePort,
  type HttpResult,
  type ServerProcess,
  startServer
} from "../support/server-process.ts"
import { freshPostgresDatabaseUrl, hasPostgres, tempDirectory } from "../support/test-database.ts"

/** The entry whose requests carrying `x-test-crash: after-route` kill it once their route ran. */
const CRASHING_ENTRY = "test/support/crash-after-route-main.ts"
const crashAfterRoute = { "x-test-crash": "after-route" }

/** One request; undefined when the connection died with the process. */
const send = (server: ServerProcess, path: string, body: unknown, headers: Record<string, string>) =>
  callServer(server, "POST", path, body, headers).pipe(
    Effect.map((result): HttpResult | undefined => result),
    Effect.catchAllDefect(() => Effect.succeed(undefined))
  )

const isReplay = (result: HttpResult | undefined) => result?.headers.get("idempotent-replayed") === "true"

describe.skipIf(!hasPostgres)("a process killed after a commit, and the client's retry", () => {
  it.live(
    "create and complete, each killed right after its commit: the retries replay them",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const env = { DATABASE_URL: url, DATA_DIR: yield* tempDirectory("acp-crash-"), PORT: String(yield* freePort) }
        const start = startServer(env, { entry: CRASHING_ENTRY })
        const sql = yield* databaseClient(url)
        const count = (table: string) =>
          Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, (rows) => rows[0]!.n)

        const createBody = { items: [{ id: "print-limited", quantity: 2 }], buyer, fulfillment_address: address }
        const createKey = { "idempotency-key": `create-${randomUUID()}` }
        const first = yield* start
        expect(yield* send(first, "/checkout_sessions", createBody, { ...createKey, ...crashAfterRoute })).toBe(
          undefined
        )
        expect((yield* Effect.promise(() => first.exited)).signal).toBe("SIGKILL")
        expect(yield* count("checkout_sessions")).toBe(1)

        const second = yield* start
        const created = yield* send(second, "/checkout_sessions", createBody, createKey)
        expect(created?.status).toBe(201)
        expect(isReplay(created)).toBe(true)
        expect(yield* count("checkout_sessions")).toBe(1)
        const reserved = yield* sql<{ n: number }>`SELECT COALESCE(SUM(quantity), 0)::int AS n FROM reservations`
        expect(reserved[0]!.n).toBe(2)

        const sessionId = created!.body.id as string
        const completeKey = { "idempotency-key": `complete-${randomUUID()}` }
        const completeBody = { payment_data: paymentData }
        const path = `/checkout_sessions/${sessionId}/complete`
        expect(yield* send(second, path, completeBody, { ...completeKey, ...crashAfterRoute })).toBe(undefined)
        expect((yield* Effect.promise(() => second.exited)).signal).toBe("SIGKILL")

        const third = yield* start
        const completed = yield* send(third, path, completeBody, completeKey)
        expect(completed?.status).toBe(200)
        expect(isReplay(completed)).toBe(true)
        expect(completed!.body.status).toBe("completed")
        expect([yield* count("orders"), yield* count("processor_charges")]).toEqual([1, 1])
        const stock = yield* sql<
          { on_hand: number }
        >`SELECT on_hand FROM stock_totals WHERE product_id = 'print-limited'`
        expect(Number(stock[0]!.on_hand)).toBe(1)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "16 buyers with keys, the process killed mid-load: every stored session is one a client can replay",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const env = { DATABASE_URL: url, DATA_DIR: yield* tempDirectory("acp-crash-"), PORT: String(yield* freePort) }
        const first = yield* startServer(env)
        const products = ["hoodie-zip", "mug-ceramic", "print-limited", "tshirt-classic"]

        // Each buyer creates and completes with keys until its connection dies; it remembers every
        // request it sent, answered or not, as a client that will retry does.
        const sent: Array<{ path: string; body: unknown; key: string }> = []
        let answered = 0
        const buyerLoop = (n: number) =>
          Effect.gen(function*() {
            for (let i = 0;; i++) {
              const create = {
                path: "/checkout_sessions",
                body: {
                  items: [{ id: products[(n + i) % products.length]!, quantity: 1 + (i % 2) }],
                  buyer,
                  fulfillment_address: address
                },
                key: `create-${randomUUID()}`
              }
              sent.push(create)
              const created = yield* send(first, create.path, create.body, { "idempotency-key": create.key })
              if (created === undefined) return
              answered++
              if (created.status !== 201 || i % 2 === 1) continue
              const complete = {
                path: `/checkout_sessions/${created.body.id}/complete`,
                body: { payment_data: paymentData },
                key: `complete-${randomUUID()}`
              }
              sent.push(complete)
              if (
                (yield* send(first, complete.path, complete.body, { "idempotency-key": complete.key })) === undefined
              ) {
                return
              }
              answered++
            }
          })
        const load = yield* Effect.fork(Effect.all(Array.from({ length: 16 }, (_, n) => buyerLoop(n)), {
          concurrency: 16
        }))
        yield* Effect.promise(async () => {
          while (answered < 60) await new Promise((resolve) => setTimeout(resolve, 5))
        })
        first.child.kill("SIGKILL")
        expect((yield* Effect.promise(() => first.exited)).signal).toBe("SIGKILL")
        yield* load.await

        // Every request retried on a new process: a replay of what the dead process committed; 409
        // for a key whose process died before committing anything (its claim is in flight until
        // the lease runs out); or a first answer for a request the dead process never claimed.
        const second = yield* startServer(env)
        const knownSessions = new Set<string>()
        const knownOrders = new Set<string>()
        let replays = 0
        for (const request of sent) {
          const retried = yield* send(second, request.path, request.body, { "idempotency-key": request.key })
          expect(retried?.status).toBeLessThan(500)
          if (isReplay(retried)) replays++
          if (retried?.status === 201) knownSessions.add(retried.body.id)
          if (retried?.status === 200) knownOrders.add(retried.body.order.id)
        }
        expect(replays).toBeGreaterThanOrEqual(answered)

        const sql = yield* databaseClient(url)
        const sessions = yield* sql<{ id: string }>`SELECT id FROM checkout_sessions`
        expect(new Set(sessions.map((s) => s.id))).toEqual(knownSessions)
        const orders = yield* sql<{ id: string }>`SELECT id FROM orders`
        expect(new Set(orders.map((o) => o.id))).toEqual(knownOrders)
        // Every approved charge paid an order, or belongs to the pending attempt of a complete that
        // died between the charge and its commit (its retry, once the lease runs out, completes it).
        const unaccounted = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM processor_charges c
          WHERE c.outcome = 'approved'
            AND NOT EXISTS (SELECT 1 FROM payment_attempts a
                            WHERE a.idempotency_key = c.idempotency_key AND a.state IN ('succeeded', 'pending'))`
        expect(unaccounted[0]!.n).toBe(0)
        const succeeded = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM payment_attempts WHERE state = 'succeeded'`
        expect(succeeded[0]!.n).toBe(orders.length)
        // Reservations are held by live sessions only, each one a client knows.
        const orphans = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM reservations r
          WHERE NOT EXISTS (
            SELECT 1 FROM checkout_sessions s
            WHERE s.id = r.session_id AND s.status IN ('not_ready_for_payment', 'ready_for_payment'))`
        expect(orphans[0]!.n).toBe(0)
        expect(knownSessions.size).toBeGreaterThan(0)
      }).pipe(Effect.scoped),
    120_000
  )
})
