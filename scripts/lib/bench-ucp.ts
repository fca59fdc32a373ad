/**
 * The mode `ucp`: a UCP create against an ACP create on one server (PostgreSQL), in back-to-back
 * pairs in alternating order, as the other paired modes measure. Both are keyed (a fresh
 * Idempotency-Key per request: ACP 2026-04-17 requires one, as UCP does) and ship the same items to
 * the same address, so the difference is the protocol's: negotiation with the agent's profile
 * (fetched once, then cached), the request and response codecs. The agent's profile is served by
 * this process, on the load cores, from 127.0.0.1 (`UCP_PROFILE_ALLOWED_HOSTS`).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { address, buyer } from "./acp-client.ts"
import { authHeaders } from "./bench-loads.ts"
import { postgresVersion, writeTable } from "./bench-report.ts"
import {
  ADMIN_URL,
  benchCatalogFile,
  levels,
  log,
  measureRounds,
  perRunSeconds,
  pin,
  placeProcesses,
  startOurs,
  stop,
  tableLine,
  workDir
} from "./bench-setup.ts"
import { median, medianWithRange } from "./figures.ts"
import { FLOW_ITEMS } from "./flow.ts"
import { type LoadOptions, runLoad } from "./load.ts"
import {
  createDatabase,
  postgresReachable,
  postgresTicks,
  settlePostgres,
  TICKS_PER_SECOND,
  ticksOf
} from "./processes.ts"

const V = "2026-04-08"
const capability = (name: string, extra: Record<string, unknown> = {}) => ({
  version: V,
  spec: `https://ucp.dev/${V}/specification/${name}`,
  schema: `https://ucp.dev/${V}/schemas/shopping/${name}.json`,
  ...extra
})

/** A platform profile naming checkout and its fulfillment extension. */
const agentProfile = JSON.stringify({
  ucp: {
    version: V,
    services: {
      "dev.ucp.shopping": [{
        version: V,
        spec: `https://ucp.dev/${V}/specification/overview`,
        transport: "rest",
        schema: `https://ucp.dev/${V}/services/shopping/rest.openapi.json`
      }]
    },
    capabilities: {
      "dev.ucp.shopping.checkout": [capability("checkout")],
      "dev.ucp.shopping.fulfillment": [capability("fulfillment", { extends: "dev.ucp.shopping.checkout" })]
    },
    payment_handlers: {}
  },
  signing_keys: []
})

const serveProfile = () =>
  new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "cache-control": "public, max-age=3600" })
      response.end(agentProfile)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({ url: `http://127.0.0.1:${port}/profile.json`, close: () => server.close() })
    })
  })

const [first, last] = address.name.split(" ")
const destination = {
  first_name: first,
  last_name: last,
  street_address: address.line_one,
  address_locality: address.city,
  address_region: address.state,
  address_country: address.country,
  postal_code: address.postal_code
}

type Load = Omit<LoadOptions, "connections" | "seconds" | "url"> & { readonly path: string }

const acpCreate: Load = {
  path: "/checkout_sessions",
  method: "POST",
  headers: { ...authHeaders, "api-version": "2026-04-17", "content-type": "application/json" },
  body: JSON.stringify({
    line_items: FLOW_ITEMS,
    currency: "usd",
    capabilities: { interventions: { supported: [] } },
    buyer,
    fulfillment_details: { name: address.name, email: buyer.email, address }
  }),
  uniqueHeader: "idempotency-key",
  expected: 201
}

const ucpCreate = (profileUrl: string): Load => ({
  path: "/ucp/checkout-sessions",
  method: "POST",
  headers: {
    authorization: authHeaders.authorization,
    "ucp-agent": `profile="${profileUrl}"`,
    "content-type": "application/json"
  },
  body: JSON.stringify({
    line_items: FLOW_ITEMS.map((item) => ({ item: { id: item.id }, quantity: item.quantity })),
    buyer,
    fulfillment: { methods: [{ type: "shipping", destinations: [destination] }] }
  }),
  uniqueHeader: "idempotency-key",
  expected: 201
})

export const benchUcp = async () => {
  if (!(await postgresReachable(ADMIN_URL))) throw new Error(`PostgreSQL at ${ADMIN_URL} is not reachable`)
  placeProcesses(true, "the load generator and the agent's profile")
  const profile = await serveProfile()
  const db = await createDatabase(ADMIN_URL, "bench_ucp")
  try {
    const server = await startOurs("ucp", benchCatalogFile(), {
      DATABASE_URL: db.url,
      UCP_PROFILE_ALLOWED_HOSTS: "127.0.0.1"
    })
    const loads = { acp: acpCreate, ucp: ucpCreate(profile.url) }
    type Which = keyof typeof loads
    const run = async (which: Which, connections: number, seconds: number) => {
      const before = { server: ticksOf(server.pid), postgres: postgresTicks(true) }
      const load = loads[which]
      const result = await runLoad({ ...load, url: server.baseUrl + load.path, connections, seconds }, pin, workDir)
      const perCreate = (ticks: number) => ticks / TICKS_PER_SECOND * 1000 / Math.max(1, result.requests)
      return {
        rate: result.requests / result.durationSeconds,
        p99: result.p99,
        errors: result.errors,
        serverMs: perCreate(ticksOf(server.pid) - before.server),
        postgresMs: perCreate(postgresTicks(true) - before.postgres)
      }
    }
    for (const which of ["acp", "ucp"] as const) await run(which, 16, 5)
    tableLine("")
    tableLine(
      `UCP create against ACP create (2026-04-17, keyed) on one server, ${perRunSeconds} s per run, ${measureRounds} rounds, alternating order:`
    )
    tableLine("")
    tableLine(
      "| connections | UCP (creates/s) | ACP | UCP / ACP | request p99 UCP / ACP | server CPU per create UCP / ACP | PostgreSQL CPU per create UCP / ACP |"
    )
    tableLine("|---:|---:|---:|---:|---:|---:|---:|")
    const measured: Array<{ readonly connections: number; readonly rounds: ReadonlyArray<unknown> }> = []
    for (const connections of levels) {
      const rounds: Array<Record<Which, Awaited<ReturnType<typeof run>>>> = []
      for (let round = 1; round <= measureRounds; round++) {
        const order: ReadonlyArray<Which> = round % 2 === 1 ? ["acp", "ucp"] : ["ucp", "acp"]
        const pair: Partial<Record<Which, Awaited<ReturnType<typeof run>>>> = {}
        for (const which of order) {
          await settlePostgres(ADMIN_URL)
          await run(which, connections, 2)
          pair[which] = await run(which, connections, perRunSeconds)
          if (pair[which]!.errors > 0) log(`  ! ${which}, ${connections} connections: ${pair[which]!.errors} errors`)
        }
        rounds.push(pair as Record<Which, Awaited<ReturnType<typeof run>>>)
      }
      measured.push({ connections, rounds })
      const ms = (key: "serverMs" | "postgresMs") =>
        `${median(rounds.map((r) => r.ucp[key])).toFixed(2)} / ${median(rounds.map((r) => r.acp[key])).toFixed(2)} ms`
      tableLine(
        `| ${connections} | ${medianWithRange(rounds.map((r) => r.ucp.rate))} | ${
          medianWithRange(rounds.map((r) => r.acp.rate))
        } | ${(median(rounds.map((r) => r.ucp.rate / r.acp.rate)) * 100).toFixed(0)} % | ${
          median(rounds.map((r) => r.ucp.p99)).toFixed(0)
        } / ${median(rounds.map((r) => r.acp.p99)).toFixed(0)} ms | ${ms("serverMs")} | ${ms("postgresMs")} |`
      )
    }
    await stop(server)
    await writeTable("UCP create against ACP create", { measured }, await postgresVersion())
  } finally {
    profile.close()
    await db.drop()
  }
}
