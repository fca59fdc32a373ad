/**
 * Several real server processes (`src/main.ts`) on one PostgreSQL database: the stock and session
 * invariants hold across processes, and a process killed mid-load (SIGKILL) leaves nothing half
 * done. Needs TEST_DATABASE_URL; reports itself skipped without it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { address, buyer, paymentData } from "../support/http.ts"
import {
  callServer,
  databaseClient,
  freePort,
  type HttpResult,
  PROCESS_API_KEY,
  PROCESS_MERCHANT_API_KEY,
  spawnMain,
  startServer,
  waitHealthy
} from "../support/server-process.ts"
import { freshPostgresDatabaseUrl, hasPostgres, tempDirectory } from "../support/test-database.ts"

const INITIAL_STOCK: Record<string, number> = {
  "tshirt-classic": 100,
  "mug-ceramic": 250,
  "hoodie-zip": 40,
  "print-limited": 3,
  "ebook-field-guide": 100000,
  "gift-card-50": 100000
}

/**
 * The secret every process of one deployment shares (README, "Several processes"): the vault's
 * cards and the idempotency fingerprints are keyed by it.
 */
const deployment = (url: string) => ({ DATABASE_URL: url, VAULT_KEY: Buffer.alloc(32, 5).toString("base64") })

const count = (results: ReadonlyArray<HttpResult>, status: number) => results.filter((r) => r.status === status).length

describe.skipIf(!hasPostgres)("two server processes on one PostgreSQL database", () => {
  it.live(
    "concurrent creates and completes spread over both processes keep every invariant",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        // Both start at once: the migrations run once, under the migrator's lock.
        const [a, b] = yield* Effect.all([startServer(deployment(url)), startServer(deployment(url))], {
          concurrency: 2
        })
        const servers = [a, b] as const

        // 20 creates of the print with stock 3 → exactly 3 reserve it.
        const creates = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) =>
            callServer(servers[i % 2]!, "POST", "/checkout_sessions", {
              items: [{ id: "print-limited", quantity: 1 }],
              buyer,
              fulfillment_address: address
            })),
          { concurrency: "unbounded" }
        )
        expect(count(creates, 201)).toBe(3)
        expect(count(creates, 422)).toBe(17)
        expect(creates.filter((r) => r.status === 422).every((r) => r.body.code === "out_of_stock")).toBe(true)

        // 10 completes of one session → exactly one order; the others see it completed.
        const session = creates.find((r) => r.status === 201)!.body as { id: string }
        const completes = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) =>
            callServer(servers[i % 2]!, "POST", `/checkout_sessions/${session.id}/complete`, {
              payment_data: paymentData
            })),
          { concurrency: "unbounded" }
        )
        expect(count(completes, 200)).toBe(1)
        expect(count(completes, 409)).toBe(9)
        expect(
          completes.filter((r) =>
            r.status === 409
          ).every((r) => r.body.code === "session_completed")
        ).toBe(true)
        const order = completes.find((r) => r.status === 200)!.body.order as { id: string }

        // Both processes read the same state.
        for (const server of servers) {
          const read = yield* callServer(server, "GET", `/checkout_sessions/${session.id}`)
          expect(read.body.status).toBe("completed")
        }
        // Concurrent completes of every remaining session, each sent to both processes at once.
        const others = creates.filter((r) => r.status === 201 && r.body.id !== session.id).map((r) =>
          r.body.id as string
        )
        const pairs = yield* Effect.all(
          others.flatMap((id) =>
            servers.map((server) =>
              callServer(server, "POST", `/checkout_sessions/${id}/complete`, { payment_data: paymentData })
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(count(pairs, 200)).toBe(others.length)
        expect(count(pairs, 409)).toBe(others.length)

        // The database agrees: 3 orders, one per session, the print sold out, nothing reserved.
        const sql = yield* databaseClient(url)
        const orders = yield* sql<
          { id: string; checkout_session_id: string }
        >`SELECT id, checkout_session_id FROM orders`
        expect(orders).toHaveLength(3)
        expect(new Set(orders.map((o) => o.checkout_session_id)).size).toBe(3)
        expect(orders.map((o) => o.id)).toContain(order.id)
        const stock = yield* sql<
          { on_hand: number }
        >`SELECT on_hand FROM stock_totals WHERE product_id = 'print-limited'`
        expect(stock.map((s) => Number(s.on_hand))).toEqual([0])
        const reserved = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM reservations`
        expect(reserved[0]!.n).toBe(0)
        const sold = yield* callServer(b, "POST", "/checkout_sessions", {
          items: [{ id: "print-limited", quantity: 1 }]
        })
        expect(sold.status).toBe(422)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("the delegate rate limit is one budget per API key across both processes", () =>
    Effect.gen(function*() {
      const url = yield* freshPostgresDatabaseUrl
      const env = { ...deployment(url), DELEGATE_RATE_LIMIT_PER_MINUTE: "4" }
      const [a, b] = yield* Effect.all([startServer(env), startServer(env)], { concurrency: 2 })
      // Each request spends a token before its body is looked at (this one is a 400).
      const statuses: Array<number> = []
      for (const server of [a, b, a, b, a, b]) {
        statuses.push((yield* callServer(server, "POST", "/agentic_commerce/delegate_payment", {})).status)
      }
      expect(statuses).toEqual([400, 400, 400, 400, 429, 429])
    }).pipe(Effect.scoped), 120_000)

  it.live(
    "one Idempotency-Key sent 30 times at once to both processes makes one session and one order",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const [a, b] = yield* Effect.all([startServer(deployment(url)), startServer(deployment(url))], {
          concurrency: 2
        })
        const servers = [a, b] as const
        const body = { items: [{ id: "mug-ceramic", quantity: 1 }], buyer, fulfillment_address: address }
        const creates = yield* Effect.all(
          Array.from(
            { length: 30 },
            (_, i) =>
              callServer(servers[i % 2]!, "POST", "/checkout_sessions", body, { "idempotency-key": "idem-create-1" })
          ),
          { concurrency: "unbounded" }
        )
        const created = creates.filter((r) => r.status === 201)
        expect(created.length + count(creates, 409)).toBe(30)
        expect(new Set(created.map((r) => r.body.id)).size).toBe(1)
        expect(created.filter((r) => r.headers.get("idempotent-replayed") !== "true")).toHaveLength(1)
        const sessionId = created[0]!.body.id as string

        const completes = yield* Effect.all(
          Array.from({ length: 30 }, (_, i) =>
            callServer(servers[i % 2]!, "POST", `/checkout_sessions/${sessionId}/complete`, {
              payment_data: paymentData
            }, {
              "idempotency-key": "idem-complete-1"
            })),
          { concurrency: "unbounded" }
        )
        const completed = completes.filter((r) =>
          r.status === 200
        )
        expect(completed.length + count(completes, 409)).toBe(30)
        expect(
          new Set(completed.map((r) => r.body.order.id)).size
        ).toBe(1)
        // Retried once more after everything settled: the stored 200 again, on either process.
        for (const server of servers) {
          const replay = yield* callServer(server, "POST", `/checkout_sessions/${sessionId}/complete`, {
            payment_data: paymentData
          }, { "idempotency-key": "idem-complete-1" })
          expect(replay.status).toBe(200)
          expect(replay.headers.get("idempotent-replayed")).toBe("true")
        }

        const sql = yield* databaseClient(url)
        const sessions = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM checkout_sessions`
        expect(sessions[0]!.n).toBe(1)
        const charges = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM processor_charges WHERE outcome = 'approved'`
        expect(charges[0]!.n).toBe(1)
        const orders = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM orders`
        expect(orders[0]!.n).toBe(1)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "SIGKILL during a burst of creates and completes loses nothing committed and leaks no stock",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresDatabaseUrl
        const dataDir = yield* tempDirectory("acp-sigkill-")
        const port = yield* freePort
        const env = { DATABASE_URL: url, DATA_DIR: dataDir, PORT: String(port) }
        const first = yield* startServer(env)

        // Each worker loops: create (1–2 units of a product), then complete every other session.
        const acknowledged: Array<{ id: string; status: string; orderId?: string }> = []
        const products = ["hoodie-zip", "mug-ceramic", "print-limited", "tshirt-classic"]
        let stop = false
        const worker = (n: number) =>
          Effect.gen(function*() {
            for (let i = 0; !stop; i++) {
              const created = yield* callServer(first, "POST", "/checkout_sessions", {
                items: [{ id: products[(n + i) % products.length]!, quantity: 1 + (i % 2) }],
                buyer,
                fulfillment_address: address
              })
              if (created.status === 201) acknowledged.push({ id: created.body.id, status: created.body.status })
              if (created.status !== 201 || i % 2 === 1) continue
              const completed = yield* callServer(first, "POST", `/checkout_sessions/${created.body.id}/complete`, {
                payment_data: paymentData
              })
              if (completed.status === 200) {
                acknowledged.push({ id: created.body.id, status: "completed", orderId: completed.body.order.id })
              }
            }
          }).pipe(Effect.catchAllDefect(() => Effect.void)) // the connection dies with the process

        const load = yield* Effect.fork(Effect.all(Array.from({ length: 8 }, (_, n) => worker(n)), { concurrency: 8 }))
        // Kill once a good number of requests has been acknowledged, while the others are in flight.
        yield* Effect.promise(async () => {
          while (acknowledged.length < 40) await new Promise((r) => setTimeout(r, 5))
        })
        first.child.kill("SIGKILL")
        const exit = yield* Effect.promise(() => first.exited)
        expect(exit.signal).toBe("SIGKILL")
        stop = true
        yield* load.await

        const second = yield* waitHealthy(
          yield* spawnMain({
            ...env,
            API_KEYS: PROCESS_API_KEY,
            MERCHANT_API_KEYS: PROCESS_MERCHANT_API_KEY,
            HOST: "127.0.0.1"
          })
        )
        // Everything acknowledged is there, at least as far as it was acknowledged.
        const latest = new Map<string, { status: string; orderId?: string }>()
        for (const ack of acknowledged) {
          const previous = latest.get(ack.id)
          if (previous === undefined || ack.status === "completed") latest.set(ack.id, ack)
        }
        for (const [id, ack] of latest) {
          const read = yield* callServer(second, "GET", `/checkout_sessions/${id}`)
          expect(read.status, id).toBe(200)
          if (ack.status === "completed") {
            expect(read.body.status).toBe("completed")
          } else {
            expect(["ready_for_payment", "completed"]).toContain(read.body.status)
          }
        }
        const sql = yield* databaseClient(url)
        const orderRows = yield* sql<
          { id: string; checkout_session_id: string }
        >`SELECT id, checkout_session_id FROM orders`
        const orderIds = new Set(orderRows.map((o) => o.id))
        for (const ack of latest.values()) if (ack.orderId !== undefined) expect(orderIds.has(ack.orderId)).toBe(true)
        // Every order belongs to a completed session, and every completed session has its order.
        const completedSessions = yield* sql<
          { id: string }
        >`SELECT id FROM checkout_sessions WHERE status = 'completed'`
        expect(new Set(orderRows.map((o) => o.checkout_session_id))).toEqual(
          new Set(completedSessions.map((s) => s.id))
        )
        // Reservations ⊆ live sessions.
        const orphans = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM reservations r
        WHERE NOT EXISTS (
          SELECT 1 FROM checkout_sessions s
          WHERE s.id = r.session_id AND s.status IN ('not_ready_for_payment', 'ready_for_payment')
        )`
        expect(orphans[0]!.n).toBe(0)
        // on hand + consumed by completed sessions = initial; reserved never above on hand.
        const consumed = yield* sql<{ product_id: string; quantity: number }>`
        SELECT li->'item'->>'id' AS product_id, SUM((li->'item'->>'quantity')::int)::int AS quantity
        FROM checkout_sessions s, json_array_elements(s.data->'line_items') li
        WHERE s.status = 'completed'
        GROUP BY 1`
        const consumedBy = new Map(consumed.map((c) => [c.product_id, Number(c.quantity)]))
        const stock = yield* sql<{ product_id: string; on_hand: number; reserved: number }>`
        SELECT s.product_id, s.on_hand, COALESCE(SUM(r.quantity), 0)::int AS reserved
        FROM stock_totals s LEFT JOIN reservations r ON r.product_id = s.product_id
        GROUP BY s.product_id, s.on_hand`
        for (const row of stock) {
          expect(Number(row.on_hand) + (consumedBy.get(row.product_id) ?? 0), row.product_id).toBe(
            INITIAL_STOCK[row.product_id]
          )
          expect(Number(row.reserved)).toBeLessThanOrEqual(Number(row.on_hand))
        }
        expect(orderRows.length).toBeGreaterThan(0)
      }).pipe(Effect.scoped),
    120_000
  )
})
