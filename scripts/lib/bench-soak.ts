/**
 * The soak (`npm run soak`, the mode `soak`): the full flow for --duration seconds with
 * --connections agents against two server processes on one PostgreSQL database, then checks the
 * database (one order and one charge per completed session, stock adds up, every order event
 * delivered), no 5xx, no error log lines, and flat memory. Prints a pass/fail table, writes
 * bench/results/<date>-<host>-soak.{json,md} and exits 1 on a failure.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import {
  machine,
  postgresVersion,
  printSoakChecks,
  type SoakCheck,
  soakMarkdown,
  writeResults
} from "./bench-report.ts"
import {
  ADMIN_URL,
  API_KEY,
  BENCH_STOCK,
  benchCatalogFile,
  flowRow,
  levels,
  log,
  MB,
  perRunSeconds,
  placeProcesses,
  record,
  startOurs,
  stop
} from "./bench-setup.ts"
import { runFlow } from "./flow.ts"
import { cpuMeter, createDatabase, postgresReachable, sampleRss, sqlClient } from "./processes.ts"

export const benchSoak = async () => {
  // 300 s by default: for about the first minute the heap grows to its steady state, so a short
  // soak cannot tell a leak from warm-up.
  const seconds = perRunSeconds
  const agents = levels[0] ?? 32
  if (!(await postgresReachable(ADMIN_URL))) {
    console.error(`Soak needs PostgreSQL: ${ADMIN_URL} is not reachable (set BENCH_DATABASE_URL).`)
    process.exitCode = 1
    return
  }
  const catalogFile = benchCatalogFile()
  const db = await createDatabase(ADMIN_URL, "soak_acp")
  const sql = sqlClient(db.url)
  try {
    const shared = {
      DATABASE_URL: db.url,
      VAULT_KEY: randomBytes(32).toString("base64"),
      WEBHOOK_SECRET: "whsec_bench_" + randomBytes(8).toString("hex")
    }
    log(`Soak: ${seconds} s, ${agents} agents, two server processes on database ${db.name}`)
    placeProcesses(false, "", "two server processes share every core with the agents and PostgreSQL")
    const a = await startOurs("soak-a", catalogFile, shared, undefined, false)
    const b = await startOurs("soak-b", catalogFile, shared, undefined, false)
    const sampler = sampleRss([a.pid, b.pid], 1000)
    const meter = cpuMeter([a.pid, b.pid])
    const stats = await runFlow({
      baseUrls: [a.baseUrl, b.baseUrl],
      apiKey: API_KEY,
      agents,
      durationMillis: seconds * 1000
    })
    const cpu = meter.stop()
    const samples = sampler.stop()
    const row = flowRow("soak", stats, Math.max(...sampler.peak()), cpu)
    record(row)

    // Let the outbox drain: every order event delivered (up to 60 s).
    const drainDeadline = Date.now() + 60_000
    let undelivered = -1
    while (Date.now() < drainDeadline) {
      undelivered = Number(
        (await sql.query<{ n: string }>("SELECT count(*) AS n FROM webhook_outbox WHERE state <> 'delivered'"))[0]?.n
      )
      if (undelivered === 0) break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }

    await sql.query("ANALYZE")
    const one = async (text: string) => Number(Object.values((await sql.query(text))[0] ?? {})[0] ?? 0)
    const completed = await one("SELECT count(*) FROM checkout_sessions WHERE status = 'completed'")
    const orders = await one("SELECT count(*) FROM orders")
    // Counted per session by one grouping each, not a subquery per session: the tables were filled
    // within minutes, before any automatic ANALYZE, and a per-session plan on such statistics can
    // scan every charge once per session.
    const badOrders = await one(`
      SELECT count(*) FROM checkout_sessions s
      LEFT JOIN (SELECT checkout_session_id, count(*) AS n FROM orders GROUP BY checkout_session_id) o
        ON o.checkout_session_id = s.id
      WHERE s.status = 'completed' AND coalesce(o.n, 0) <> 1`)
    const badCharges = await one(`
      SELECT count(*) FROM checkout_sessions s
      LEFT JOIN (
        SELECT pa.session_id, count(*) AS n
        FROM payment_attempts pa JOIN processor_charges pc ON pc.idempotency_key = pa.idempotency_key
        WHERE pc.outcome = 'approved' GROUP BY pa.session_id
      ) c ON c.session_id = s.id
      WHERE s.status = 'completed' AND coalesce(c.n, 0) <> 1`)
    const charges = await one("SELECT count(*) FROM processor_charges WHERE outcome = 'approved'")
    const orphanOrders = await one(`
      SELECT count(*) FROM orders o JOIN checkout_sessions s ON s.id = o.checkout_session_id WHERE s.status <> 'completed'`)
    const stock = await sql.query<
      { product_id: string; on_hand: number; reserved: number; consumed: string | null; held: string | null }
    >(`
      SELECT s.product_id, s.on_hand, s.reserved,
        (SELECT SUM((li->'quantity'->>'ordered')::int) FROM orders o, json_array_elements(o.data->'line_items') li
          WHERE li->>'product_id' = s.product_id) AS consumed,
        (SELECT SUM(r.quantity) FROM reservations r WHERE r.product_id = s.product_id) AS held
      FROM stock_totals s ORDER BY s.product_id`)
    const stockBad = stock.filter((r) =>
      Number(r.on_hand) + Number(r.consumed ?? 0) !== BENCH_STOCK || Number(r.held ?? 0) > Number(r.on_hand)
    )
    // The maintained counters (migrations 0007, 0019: the stock row's with its shards') equal the
    // sum of the reservation rows they count.
    const counterBad = stock.filter((r) => Number(r.reserved) !== Number(r.held ?? 0))
    const heldByCompleted = await one(`
      SELECT count(*) FROM reservations r JOIN checkout_sessions s ON s.id = r.session_id WHERE s.status = 'completed'`)
    const outboxRows = await one("SELECT count(*) FROM webhook_outbox")
    const receivedOrders = await one("SELECT count(*) FROM received_orders")
    await Promise.all([stop(a), stop(b)])
    const errorLines = [a, b].flatMap((p) =>
      readFileSync(p.logFile, "utf8").split("\n").filter((l) => /level=(ERROR|FATAL)/.test(l))
    )

    // Memory: mean RSS of the last third vs the first third of the run, per process.
    const flat = [0, 1].map((i) => {
      const values = samples.map((s) => s.rss[i] ?? 0).filter((v) => v > 0)
      const third = Math.max(1, Math.floor(values.length / 3))
      const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / xs.length
      const first = mean(values.slice(0, third))
      const last = mean(values.slice(-third))
      return { first: first / MB, last: last / MB, growth: last / first - 1 }
    })

    const checks: Array<SoakCheck> = [
      {
        check: "full flow ran",
        detail: `${stats.checkouts} checkouts, ${row.checkoutsPerSecond!.toFixed(1)}/s, request p99 ${
          row.p99.toFixed(0)
        } ms`,
        ok: stats.checkouts > 0
      },
      {
        check: "no client errors",
        detail: `${stats.errors} unexpected responses ${stats.errorSamples.slice(0, 2).join("; ")}`,
        ok: stats.errors === 0
      },
      { check: "no 5xx", detail: `${stats.serverErrors} responses ≥ 500`, ok: stats.serverErrors === 0 },
      {
        check: "no error log lines",
        detail: `${errorLines.length} ERROR/FATAL lines${errorLines[0] ? `: ${errorLines[0].slice(0, 160)}` : ""}`,
        ok: errorLines.length === 0
      },
      {
        check: "completed sessions = client checkouts",
        detail: `${completed} in the database, ${stats.checkouts} seen by agents`,
        ok: completed === stats.checkouts
      },
      {
        check: "one order per completed session",
        detail:
          `${orders} orders, ${badOrders} sessions without exactly one, ${orphanOrders} orders of sessions not completed`,
        ok: badOrders === 0 && orders === completed && orphanOrders === 0
      },
      {
        check: "one charge per completed session",
        detail: `${charges} approved charges, ${badCharges} sessions without exactly one`,
        ok: badCharges === 0 && charges === completed
      },
      {
        check: "stock adds up",
        detail: stock.map((r) =>
          `${r.product_id}: ${r.on_hand} + ${r.consumed ?? 0} consumed`
        ).filter((_, i) => i < 2).join(", ") +
          ` …; ${stockBad.length} products off, ${heldByCompleted} reservations held by completed sessions, ${counterBad.length} reserved counters off`,
        ok: stockBad.length === 0 && heldByCompleted === 0 && counterBad.length === 0
      },
      {
        check: "every order event delivered",
        detail: `${outboxRows} events, ${undelivered} not delivered, ${receivedOrders} orders received by the platform`,
        ok: undelivered === 0 && outboxRows >= orders && receivedOrders === orders
      },
      ...flat.map((f, i) => ({
        check: `memory flat (process ${i === 0 ? "a" : "b"})`,
        detail: `RSS ${f.first.toFixed(0)} MB first third → ${f.last.toFixed(0)} MB last third (${
          (f.growth * 100).toFixed(1)
        } %)`,
        ok: f.growth <= 0.15
      })),
      {
        check: "peak RSS < 250 MB (the goal; reported, not a soak failure)",
        detail: `${row.peakRssMb.toFixed(0)} MB`,
        ok: row.peakRssMb < 250,
        informational: true
      }
    ]
    printSoakChecks(checks)
    const ok = checks.every((c) =>
      c.ok || c.informational === true
    )
    log(`\nSoak ${ok ? "PASSED" : "FAILED"}`)
    const info = await machine(await postgresVersion())
    const md = soakMarkdown(info, { seconds, agents, row, checks, ok })
    writeResults("-soak", { machine: info, seconds, agents, checks, flow: row, rssSamples: samples }, md, info)
    if (!ok) process.exitCode = 1
  } finally {
    await sql.close().catch(() => undefined)
    await db.drop()
  }
}
