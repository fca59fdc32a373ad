/**
 * CPU of our server per step of a checkout, on PostgreSQL (the mode `steps`): where a checkout's
 * server time goes, which the full flow's rate alone does not say. The server runs as the bench
 * runs it (`npm start`'s flags, pinned to core 0 when pinning); agents in this process send each
 * step for 2,000 sessions at the first `--connections` concurrency (default 1: one request at a
 * time) — all creates, then all GETs, updates, tokenizations and completions — and the server's
 * CPU time (from `/proc`) is divided by the requests of the step. The server runs without the
 * order-event sender (`ROLES`), so completing only queues each order's event; then a second
 * server on the same database, with only the sender and the receiver
 * (`ROLES=webhook_sender,webhook_receiver`, the events posted to itself), delivers them all, and
 * its CPU per event is the last line: both ends of a delivery, which the full flow's server pays
 * too. `--api-version 2026-04-17` sends that version's format with a fresh Idempotency-Key on
 * every POST; `--profile` runs both servers under `--cpu-prof` and prints where their time went.
 */
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { tokenizeBody } from "./acp-client.ts"
import { dialectOf, type SessionView } from "./agent-dialects.ts"
import { postgresVersion, writeTable } from "./bench-report.ts"
import {
  ADMIN_URL,
  API_KEY,
  apiVersion,
  args,
  benchCatalogFile,
  levels,
  placeProcesses,
  startOurs,
  stop,
  tableLine,
  workDir
} from "./bench-setup.ts"
import { printProfile } from "./cpu-profile.ts"
import { FLOW_ITEMS } from "./flow.ts"
import { createDatabase, type NodeProcess, sleep, sqlClient, TICKS_PER_SECOND, ticksOf } from "./processes.ts"

const SESSIONS = 2_000
const WARM_UP = 500
const STEP_ROLES = "checkout,delegate,webhook_receiver"
const keyed = apiVersion >= "2026-04-17"
const dialect = dialectOf(apiVersion)
const concurrency = levels[0] ?? 1

export const benchSteps = async () => {
  const database = await createDatabase(ADMIN_URL, "bench_steps")
  placeProcesses(true, "the agents (in the bench's own process)")
  const profileDir = args.profile ? join(workDir, "profile") : undefined
  try {
    await measure(
      await startOurs("steps", benchCatalogFile(), { DATABASE_URL: database.url, ROLES: STEP_ROLES }, profileDir)
    )
    const deliveryProfileDir = profileDir === undefined ? undefined : join(workDir, "profile-delivery")
    await measureDelivery(database.url, deliveryProfileDir)
    await writeTable(
      "Server CPU per step",
      { apiVersion, concurrency, sessions: SESSIONS, figures },
      await postgresVersion()
    )
    printProfile("the server (every step but delivery)", profileDir, 40)
    printProfile("the delivering server (both ends)", deliveryProfileDir, 40)
  } finally {
    await database.drop()
  }
}

const figures: Array<{ readonly step: string; readonly cpuMs: number; readonly perSecond?: number }> = []

/** One line of the table: a step's server CPU per request (per event for the delivery). */
const figure = (step: string, cpuMs: number, perSecond: number | undefined) => {
  figures.push({ step, cpuMs, ...(perSecond !== undefined ? { perSecond } : {}) })
  tableLine(`| ${step} | ${cpuMs.toFixed(2)} | ${perSecond?.toFixed(0) ?? ""} |`)
}

const measure = async (server: NodeProcess) => {
  const headers = (): Record<string, string> => ({
    authorization: `Bearer ${API_KEY}`,
    "api-version": apiVersion,
    "content-type": "application/json",
    ...(keyed ? { "idempotency-key": randomUUID() } : {})
  })
  const call = async (method: string, path: string, expected: number, body?: unknown) => {
    const response = await fetch(server.baseUrl + path, {
      method,
      headers: headers(),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await response.text()
    if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
    return JSON.parse(text)
  }

  /** Runs `request` for each input at the concurrency; prints the server's CPU per request. */
  const step = async <A, B>(name: string, inputs: ReadonlyArray<A>, request: (input: A) => Promise<B>) => {
    const results: Array<B> = new Array(inputs.length)
    const before = ticksOf(server.pid)
    const started = performance.now()
    let next = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < inputs.length) {
        const i = next++
        results[i] = await request(inputs[i]!)
      }
    }))
    const seconds = (performance.now() - started) / 1000
    const cpuMs = (ticksOf(server.pid) - before) * 1000 / TICKS_PER_SECOND
    if (name !== "") figure(name, cpuMs / inputs.length, inputs.length / seconds)
    return results
  }

  const create = () => call("POST", "/checkout_sessions", 201, dialect.createBody(FLOW_ITEMS)).then(dialect.view)
  tableLine(
    `Server CPU per step of ${SESSIONS} checkouts, ${apiVersion}${
      keyed ? " with Idempotency-Key" : ""
    }, ${concurrency} at once, after ${WARM_UP} creates:`
  )
  tableLine("")
  tableLine("| step | server CPU per request, ms | requests/s |")
  tableLine("|---|---:|---:|")
  await step("", Array.from({ length: WARM_UP }), create)
  const sessions = await step("create", Array.from({ length: SESSIONS }), create)
  await step("get", sessions, (s: SessionView) => call("GET", `/checkout_sessions/${s.id}`, 200))
  const ready = await step(
    "update (select option)",
    sessions,
    (s: SessionView) =>
      call("POST", `/checkout_sessions/${s.id}`, 200, dialect.selectOptionBody(s, s.options.at(-1)?.id ?? "")).then(
        dialect.view
      )
  )
  const total = (s: SessionView) => s.totals.find((t) => t.type === "total")?.amount ?? 0
  const tokens = await step(
    "delegate (tokenize)",
    ready,
    (s: SessionView) =>
      call("POST", "/agentic_commerce/delegate_payment", 201, tokenizeBody(s.id, total(s), "bench steps"))
  )
  const paid = ready.map((session, i) => ({ session, token: tokens[i].id as string }))
  await step(
    "complete",
    paid,
    ({ session, token }) => call("POST", `/checkout_sessions/${session.id}/complete`, 200, dialect.completeBody(token))
  )
  await stop(server)
}

/** Both ends of the delivery of every queued order event, by a server that only delivers. */
const measureDelivery = async (databaseUrl: string, profileDir: string | undefined) => {
  const database = sqlClient(databaseUrl)
  try {
    const pending = () =>
      database.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_outbox WHERE state = 'pending'").then((
        rows
      ) => rows[0]!.n)
    const events = await pending()
    const sender = await startOurs("deliver", benchCatalogFile(), {
      DATABASE_URL: databaseUrl,
      ROLES: "webhook_sender,webhook_receiver"
    }, profileDir)
    const before = ticksOf(sender.pid)
    while (await pending() > 0) await sleep(100)
    const cpuMs = (ticksOf(sender.pid) - before) * 1000 / TICKS_PER_SECOND
    figure("deliver an order event (both ends)", cpuMs / events, undefined)
    await stop(sender)
  } finally {
    await database.close()
  }
}
