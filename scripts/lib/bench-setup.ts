/**
 * What every mode of the bench (`scripts/bench.ts`) shares: the command line and the modes'
 * defaults, the servers they start (ours, the stack floor, a bare Node server), the rows they
 * measure, and the run's clean-up.
 *
 * Options (a mode's defaults in `MODES`; one given on the command line wins): --mode <name>,
 * --duration <s> (per run), --connections <n,…> (concurrency, or agents for the flow), --rounds <n>
 * (runs of each measurement, reported as the median and its spread), --pairs <n> (rounds of
 * paired runs, 0: none), --api-version <v> (the flow's agents: 2025-09-29, or 2026-04-17 with a
 * fresh Idempotency-Key on every POST), --stripe (the flow pays with Stripe shared payment tokens
 * through the Stripe-compatible test server, `npm run stripe:fake`, run on the load cores), --pool <n> (DATABASE_POOL_SIZE of the servers and the
 * floor; 10), --log-level <level> (the servers' LOG_LEVEL), --profile (the server under
 * --cpu-prof, where its time goes printed), --out <dir> (bench/results), --no-write, --keep (keep
 * the work directory with the server logs), --no-pin (do not pin processes to cores,
 * `affinity.ts`); for `against`: --against <git ref>, --earlier-flags ours|own, --receiver
 * self|apart.
 * Env: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { API_VERSION } from "./acp-client.ts"
import { LOAD_CORES, pinning, pinPostgres, SERVER_CORES } from "./affinity.ts"
import { type FlowStats, percentile } from "./flow.ts"
import {
  buildFloor,
  buildServer,
  type CpuUse,
  freePort,
  logPath,
  type NodeProcess,
  PROJECT_ROOT,
  serverNodeArgs,
  spawnNode,
  waitHealthy
} from "./processes.ts"

export type Target = "bare" | "floor" | "postgres" | "embedded"
export type Scenario = "get" | "create" | "flow"

interface Mode {
  /** One line for `--help`. */
  readonly what: string
  /** The servers measured, for the modes that measure targets (`bench-targets.ts`). */
  readonly targets?: ReadonlyArray<Target>
  readonly scenarios?: ReadonlyArray<Scenario>
  /** The API versions the flow runs in (`--api-version` picks one). */
  readonly flowVersions?: ReadonlyArray<string>
  readonly connections: string
  readonly duration?: number
  readonly rounds?: number
  readonly pairs?: number
}

/** The modes and their defaults; each mode's defaults are those of the runs docs/performance.md cites. */
export const MODES = {
  targets: {
    what: "every goal judged: the bare server, the floor, ours on PostgreSQL and on the embedded store, pairs",
    targets: ["bare", "floor", "postgres", "embedded"],
    scenarios: ["get", "create", "flow"],
    flowVersions: [API_VERSION],
    connections: "1,16,64",
    duration: 5,
    rounds: 3,
    pairs: 3
  },
  pairs: {
    what: "GET and create session against the floor's read and write, in back-to-back pairs",
    targets: ["floor", "postgres"],
    scenarios: ["get", "create"],
    connections: "16,64",
    duration: 5,
    rounds: 1,
    pairs: 5
  },
  flow: {
    what: "the full flow on PostgreSQL, in the 2025-09-29 format and in the 2026-04-17 one (keyed)",
    targets: ["postgres"],
    scenarios: ["flow"],
    flowVersions: [API_VERSION, "2026-04-17"],
    connections: "1,16,64",
    duration: 10,
    rounds: 3
  },
  embedded: {
    what: "GET, create and the flow on the embedded store, and its two processes' memory",
    targets: ["embedded"],
    scenarios: ["get", "create", "flow"],
    flowVersions: [API_VERSION],
    connections: "16,64",
    duration: 5,
    rounds: 1
  },
  workers: {
    what: "the full flow on one server process against WORKERS=2, in back-to-back pairs",
    connections: "1,16,64",
    duration: 10,
    rounds: 3
  },
  steps: {
    what: "the server's CPU per step of a checkout (create, GET, update, tokenize, complete, delivery)",
    connections: "1"
  },
  against: {
    what: "the full flow, ours against an earlier commit (--against <ref>), in back-to-back pairs",
    connections: "1,16,64",
    duration: 10,
    rounds: 3
  },
  ucp: {
    what: "a UCP create against an ACP create (2026-04-17, keyed) on one server, in back-to-back pairs",
    connections: "1,16,64",
    duration: 5,
    rounds: 5
  },
  soak: {
    what: "the flow on two processes sharing one database for minutes, then the database's invariants",
    connections: "32",
    duration: 300
  }
} satisfies Record<string, Mode>

export type ModeName = keyof typeof MODES

export const { values: args } = parseArgs({
  options: {
    mode: { type: "string", default: "targets" },
    help: { type: "boolean", default: false },
    duration: { type: "string" },
    connections: { type: "string" },
    rounds: { type: "string" },
    pairs: { type: "string" },
    "api-version": { type: "string" },
    "log-level": { type: "string" },
    pool: { type: "string", default: "10" },
    profile: { type: "boolean", default: false },
    out: { type: "string", default: join(PROJECT_ROOT, "bench", "results") },
    "no-write": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "no-pin": { type: "boolean", default: false },
    against: { type: "string" },
    "earlier-flags": { type: "string", default: "ours" },
    receiver: { type: "string", default: "self" },
    stripe: { type: "boolean", default: false },
    scenario: { type: "string", default: "flow" }
  }
})

if (args.help || !Object.hasOwn(MODES, args.mode)) {
  if (!args.help) console.error(`unknown mode: ${args.mode}`)
  console.log("npm run bench -- --mode <mode> [options] (options: the top of scripts/lib/bench-setup.ts)")
  for (const [name, mode] of Object.entries(MODES)) console.log(`  ${name.padEnd(9)} ${mode.what}`)
  process.exit(args.help ? 0 : 2)
}

export const modeName = args.mode as ModeName
const mode: Mode = MODES[modeName]

export const ADMIN_URL = process.env["BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
export const API_KEY = "sk_bench_" + randomBytes(8).toString("hex")
/** The merchant key the bench's servers are given, so that none generates one (the bench calls no order route). */
export const MERCHANT_API_KEY = "mk_bench_" + randomBytes(8).toString("hex")
export const BENCH_STOCK = 10_000_000
export const workDir = mkdtempSync(join(tmpdir(), "acp-bench-"))
const running = new Set<NodeProcess>()
export const MB = 1024 * 1024

export const log = (line: string) => console.log(line)

/** The lines of a mode's own table (`writeTable` in `bench-report.ts` writes them to its results file). */
export const tableLines: Array<string> = []

/** Prints `line` and keeps it for the results file. */
export const tableLine = (line: string) => {
  log(line)
  tableLines.push(line)
}

export const perRunSeconds = Number(args.duration ?? mode.duration ?? 5)
export const levels = (args.connections ?? mode.connections).split(",").map((c) => Number(c.trim())).filter((c) =>
  c > 0
)
export const pairRounds = Number(args.pairs ?? mode.pairs ?? 0)
export const measureRounds = Math.max(1, Number(args.rounds ?? mode.rounds ?? 1))
export const targets: ReadonlySet<Target> = new Set(mode.targets)
export const scenarios: ReadonlySet<Scenario> = new Set(mode.scenarios)
/** The agents' API version in the modes that run the flow in one format. */
export const apiVersion = args["api-version"] ?? API_VERSION
export const flowVersions: ReadonlyArray<string> = args["api-version"] !== undefined
  ? [args["api-version"]]
  : mode.flowVersions ?? []
/** Servers on core 0, everything else on the other cores (`affinity.ts`). */
export const pin = pinning(!args["no-pin"])
/** `--stripe`: the flow pays through the Stripe-compatible test server (`useStripeFake`). */
export const viaStripe = args.stripe

// ---------------------------------------------------------------------------------------------
// Targets

/** The demo catalog with every product's stock raised, so that no run ends on `out_of_stock`. */
export const benchCatalogFile = () => {
  const catalog = JSON.parse(readFileSync(join(PROJECT_ROOT, "catalog", "demo-catalog.json"), "utf8"))
  for (const product of catalog.products) product.stock = BENCH_STOCK
  const file = join(workDir, "bench-catalog.json")
  writeFileSync(file, JSON.stringify(catalog, null, 2))
  return file
}

/** Where the flow's Stripe payments go, once `useStripeFake` started it. */
export let stripeFake: { readonly base: string; readonly secretKey: string } | undefined

/**
 * `npm run stripe:fake` as a process of its own on the load cores, like the agents: what it spends
 * answering the server's PaymentIntent calls is the outside service's, not the server's.
 */
export const useStripeFake = async () => {
  const port = await freePort()
  const secretKey = "sk_test_bench" + randomBytes(12).toString("hex")
  const proc = spawnNode(
    "stripe",
    ["--import", "tsx", join(PROJECT_ROOT, "scripts", "stripe-fake.ts"), "--port", String(port)],
    { STRIPE_SECRET_KEY: secretKey },
    port,
    logPath(workDir, "stripe"),
    pin ? LOAD_CORES : undefined
  )
  running.add(proc)
  const deadline = Date.now() + 30_000
  for (;;) {
    const up = await fetch(`${proc.baseUrl}/v1/charges/ch_none`, { headers: { authorization: `Bearer ${secretKey}` } })
      .then((response) => response.arrayBuffer().then(() => true), () => false)
    if (up) break
    if (Date.now() > deadline) throw new Error(`the Stripe-compatible server did not start:\n${proc.tail()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  stripeFake = { base: proc.baseUrl, secretKey }
  return stripeFake
}

/** The environment every server the benches start gets (raised rate limits, the bench's pool). */
export const serverEnv = (catalogFile: string, extra: Record<string, string>): Record<string, string> => ({
  HOST: "127.0.0.1",
  ...(stripeFake === undefined ? {} : { STRIPE_SECRET_KEY: stripeFake.secretKey, STRIPE_API_BASE: stripeFake.base }),
  API_KEYS: API_KEY,
  MERCHANT_API_KEYS: MERCHANT_API_KEY,
  CATALOG_FILE: catalogFile,
  DELEGATE_RATE_LIMIT_PER_MINUTE: "100000000",
  WEBHOOK_RECEIVER_RATE_LIMIT_PER_MINUTE: "100000000",
  ...(args["log-level"] !== undefined ? { LOG_LEVEL: args["log-level"] } : {}),
  DATABASE_POOL_SIZE: args.pool,
  ...extra
})

export const start = async (
  name: string,
  nodeArgs: ReadonlyArray<string>,
  env: Record<string, string>,
  port: number,
  pinned = pin
) => {
  const proc = spawnNode(name, nodeArgs, env, port, logPath(workDir, name), pinned ? SERVER_CORES : undefined)
  running.add(proc)
  await waitHealthy(proc)
  return proc
}

export const stop = async (proc: NodeProcess) => {
  await proc.stop()
  running.delete(proc)
}

/** Our server as `npm start` runs it: compiled to dist/ (built on first use), with its Node flags. */
export const startOurs = async (
  name: string,
  catalogFile: string,
  env: Record<string, string>,
  profileDir?: string,
  /** On the server's core alone (when pinning); several workers need every core. */
  pinned = pin
) => {
  buildServer()
  const port = await freePort()
  const dataDir = join(workDir, `${name}-data`)
  mkdirSync(dataDir, { recursive: true })
  const nodeArgs = [
    ...(profileDir !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
    ...serverNodeArgs()
  ]
  return start(
    name,
    nodeArgs,
    serverEnv(catalogFile, { PORT: String(port), DATA_DIR: dataDir, ...env }),
    port,
    pinned
  )
}

/** The stack floor (`bench-floor.ts`, compiled) on the database at `url`, with our server's Node flags. */
export const startFloor = async (name: string, url: string, profileDir?: string) => {
  const port = await freePort()
  const floorArgs = [
    ...(profileDir !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
    ...serverNodeArgs().slice(0, -1),
    buildFloor()
  ]
  return start(name, floorArgs, { PORT: String(port), DATABASE_URL: url, DATABASE_POOL_SIZE: args.pool }, port)
}

export const BARE_SERVER = `
const body = JSON.stringify({ id: "cs_bare", status: "ready_for_payment", currency: "usd", totals: [{ type: "total", amount: 5000 }] })
require("node:http").createServer((req, res) => {
  req.resume()
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }); res.end(body) })
}).listen(Number(process.env.PORT), "127.0.0.1")
`

// ---------------------------------------------------------------------------------------------
// Results

export interface Row {
  readonly target: string
  readonly scenario:
    | "bare"
    | "floor_read"
    | "floor_write"
    | "get_session"
    | "create_session"
    | FlowScenario
  readonly connections: number
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly errors: number
  readonly peakRssMb: number
  /** The rate of each round (requests/s, or checkouts/s for the flow); the row is the median round. */
  readonly rounds?: ReadonlyArray<number>
  readonly checkoutsPerSecond?: number
  readonly checkoutP50?: number
  readonly checkoutP99?: number
  readonly statusCounts?: Record<string, number>
  readonly errorSamples?: ReadonlyArray<string>
  readonly cpu: CpuUse
}

/** One pair: our server and the floor at the same concurrency, measured one right after the other. */
export interface Pair {
  readonly connections: number
  readonly round: number
  readonly ours: number
  readonly floor: number
  /** The server's CPU per request of each half, µs (all its threads, user and system). */
  readonly oursCpuMicros: number
  readonly floorCpuMicros: number
  readonly errors: number
}

export const rows: Array<Row> = []
export const notes: Array<string> = []
export const peaks: Record<string, number> = {}
/** Peak RSS of the embedded store's database process (a child of our server), by target. */
export const databasePeaks: Record<string, number> = {}
/** Pages resident in both our server and its database process (`shared-pages.ts`), MB, by target. */
export const sharedWithDatabase: Record<string, number> = {}
export const pairs: Record<"get_session" | "create_session", Array<Pair>> = { get_session: [], create_session: [] }

/** CPU in cores: server / PostgreSQL / load generator / everything else. */
export const cpuText = (cpu: CpuUse) =>
  [cpu.server, cpu.postgres, cpu.bench, cpu.other].map((c) => c.toFixed(2)).join("/")

/** A run's server CPU per request, µs (all its threads, user and system): its cores over its rate. */
export const serverMicrosPerRequest = (
  row: { readonly cpu: { readonly server: number }; readonly requestsPerSecond: number }
) => row.requestsPerSecond > 0 ? (row.cpu.server / row.requestsPerSecond) * 1e6 : 0

/** ` (min–max of n)` of a row measured in rounds. */
export const spreadText = (row: Row) =>
  row.rounds === undefined || row.rounds.length < 2
    ? ""
    : ` (${Math.min(...row.rounds).toFixed(0)}–${Math.max(...row.rounds).toFixed(0)} of ${row.rounds.length})`

export const record = (row: Row) => {
  rows.push(row)
  const flow = row.checkoutsPerSecond !== undefined
    ? `  checkouts/s ${row.checkoutsPerSecond.toFixed(1).padStart(7)}${spreadText(row)} (checkout p99 ${
      row.checkoutP99?.toFixed(0)
    } ms)`
    : ""
  log(
    `  ${row.target.padEnd(9)} ${row.scenario.padEnd(15)} c=${String(row.connections).padStart(3)}  ` +
      `${row.requestsPerSecond.toFixed(0).padStart(6)} req/s${
        row.checkoutsPerSecond === undefined ? spreadText(row) : ""
      }  p50 ${row.p50.toFixed(1).padStart(6)} ms  ` +
      `p99 ${row.p99.toFixed(1).padStart(6)} ms  errors ${row.errors}  rss ${row.peakRssMb.toFixed(0)} MB  ` +
      `cpu ${cpuText(row.cpu)}  server ${serverMicrosPerRequest(row).toFixed(0)} µs/request${flow}`
  )
  for (const sample of row.errorSamples ?? []) log(`      ! ${sample}`)
}

/** A flow's row: `full_flow` in the interface document's format, `full_flow_2026_04_17` in that version's. */
export type FlowScenario = "full_flow" | `full_flow_${string}`

export const flowScenarioOf = (version: string): FlowScenario => {
  const name: FlowScenario = version === API_VERSION ? "full_flow" : `full_flow_${version.replaceAll("-", "_")}`
  return viaStripe ? `${name}_stripe` : name
}

export const flowRow = (
  target: string,
  stats: FlowStats,
  peakRss: number,
  cpu: CpuUse,
  scenario: FlowScenario = "full_flow"
): Row => ({
  target,
  scenario,
  connections: stats.agents,
  requestsPerSecond: stats.requests / stats.durationSeconds,
  p50: percentile(stats.latencies, 50),
  p99: percentile(stats.latencies, 99),
  requests: stats.requests,
  errors: stats.errors,
  peakRssMb: peakRss / MB,
  checkoutsPerSecond: stats.checkouts / stats.durationSeconds,
  checkoutP50: percentile(stats.checkoutLatencies, 50),
  checkoutP99: percentile(stats.checkoutLatencies, 99),
  statusCounts: stats.statusCounts,
  errorSamples: stats.errorSamples,
  cpu
})

// ---------------------------------------------------------------------------------------------
// Running

/**
 * Pins PostgreSQL beside the load generator when pinning (every core given back at the end) and
 * notes where everything runs; `unpinned` says why a mode runs everything on every core.
 */
export const placeProcesses = (postgres: boolean, generator: string, unpinned?: string) => {
  if (unpinned !== undefined) {
    notes.push(`Not pinned: ${unpinned}.`)
  } else if (!pin) {
    notes.push(
      `Not pinned (--no-pin, or no taskset or one core): servers, ${generator} and the database share every core.`
    )
  } else {
    const moved = postgres ? pinPostgres() : { moved: 0, restore: () => {} }
    onCleanup(moved.restore)
    notes.push(
      `Pinned: the server under test on core ${SERVER_CORES} alone; ${generator}, the bench and ` +
        (moved.moved > 0 ? `PostgreSQL (${moved.moved} processes moved, given back at the end)` : "the database") +
        ` on cores ${LOAD_CORES}.`
    )
  }
  log(notes.at(-1)!)
}

const cleanups: Array<() => void> = []

/** Something to undo when the run ends, however it ends (PostgreSQL's cores). */
export const onCleanup = (undo: () => void) => void cleanups.push(undo)

const cleanup = async () => {
  await Promise.all([...running].map((p) => p.stop().catch(() => undefined)))
  for (const undo of cleanups.splice(0)) undo()
  rmSync(workDir, { recursive: true, force: true })
}

/** Runs the bench or the soak: stops every server it started and removes the work directory (unless kept). */
export const runMain = (main: () => Promise<void>) => {
  process.once("SIGINT", () => {
    void cleanup().finally(() => process.exit(130))
  })
  return main()
    .catch((error) => {
      console.error(error instanceof Error ? error.message : error)
      process.exitCode = 1
    })
    .finally(() => {
      const keep = args.profile || args.keep
      if (keep) log(`(server logs${args.profile ? " and the profile" : ""} kept in ${workDir})`)
      if (!keep) return cleanup()
      for (const undo of cleanups.splice(0)) undo()
      return Promise.all([...running].map((p) => p.stop()))
    })
}
