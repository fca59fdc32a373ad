/**
 * Benchmarks (`npm run bench`; `npm run bench -- --soak` runs the soak, `scripts/soak.ts`).
 *
 * Starts, one at a time on loopback with random free ports,
 *   - `bare`: a bare Node `http` server answering a fixed JSON body (the machine's ceiling),
 *   - `stack`: the HTTP stack in layers (`scripts/bench-stack.ts`: a fiber per request, the
 *     platform's server, one `HttpApi` endpoint), `GET /healthz` only,
 *   - `floor`: `scripts/bench-floor.ts`, a minimal HttpApi + @effect/sql-pg server on the same
 *     PostgreSQL (a primary-key read; a FOR UPDATE / UPDATE / INSERT transaction),
 *   - `postgres`: our server on a fresh PostgreSQL database (skipped when PostgreSQL is not reachable),
 *   - `embedded`: our server on the embedded store (PGlite in a temporary DATA_DIR),
 * and measures, at each concurrency: `GET /healthz` of ours and the floor when asked
 * (`--scenarios healthz`: the HTTP stack's cost per request against the bare server's), GET session
 * (autocannon, rotating over pre-created sessions),
 * create session (autocannon), and the full flow create → update → tokenize → complete (N agent
 * loops with fetch; completed checkouts per second). Then, with both floor and postgres targets,
 * the paired runs: floor and our server running at once, GET and create measured in back-to-back
 * pairs in alternating order (--pairs rounds); the GET and create targets use the median ratio.
 * Results: bench/results/<date>-<host>.{json,md}, `-2`, `-3`, … after the day's first run
 * (`scripts/lib/bench-report.ts`).
 *
 * Options and environment: see `scripts/lib/bench-setup.ts`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { address, API_VERSION, buyer } from "./lib/acp-client.ts"
import { LOAD_CORES, movePid, pinPostgres, SERVER_CORES } from "./lib/affinity.ts"
import { type CannonOptions, cannonScenario, measure, warmUp } from "./lib/bench-measure.ts"
import { evaluateTargets, machine, markdown, pct, writeResults } from "./lib/bench-report.ts"
import {
  ADMIN_URL,
  API_KEY,
  args,
  BARE_SERVER,
  benchCatalogFile,
  databasePeaks,
  flowRow,
  levels,
  log,
  MB,
  measureRounds,
  notes,
  onCleanup,
  pairRounds,
  pairs,
  peaks,
  perRunSeconds,
  pin,
  record,
  rows,
  runMain,
  scenarios,
  serverMicrosPerRequest,
  sharedWithDatabase,
  STACK_LAYERS,
  start,
  startFloor,
  startOurs,
  startStackLayer,
  stop,
  workDir
} from "./lib/bench-setup.ts"
import { summarizeCpuProfile } from "./lib/cpu-profile.ts"
import { medianOf } from "./lib/figures.ts"
import { FLOW_ITEMS, type FlowStats } from "./lib/flow.ts"
import { hasWrk, runFlowProcess } from "./lib/load.ts"
import {
  childrenOf,
  cpuMeter,
  type CpuUse,
  createDatabase,
  freePort,
  memoryOf,
  type NodeProcess,
  postgresReachable,
  sampleRss,
  settlePostgres,
  sqlClient
} from "./lib/processes.ts"
import { sharedFileBytes } from "./lib/shared-pages.ts"

// ---------------------------------------------------------------------------------------------
// Measurements

const authHeaders = { authorization: `Bearer ${API_KEY}`, "api-version": API_VERSION }

const createBody = JSON.stringify({ items: FLOW_ITEMS, buyer, fulfillment_address: address })
const jsonHeaders = { ...authHeaders, "content-type": "application/json" }

/** Sessions for the GET scenario, created up front (read in rotation). */
const preCreateSessions = async (proc: NodeProcess): Promise<Array<string>> => {
  const ids: Array<string> = []
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (ids.length < 500) {
      const response = await fetch(proc.baseUrl + "/checkout_sessions", {
        method: "POST",
        headers: jsonHeaders,
        body: createBody
      })
      const body = (await response.json()) as { id: string }
      if (response.status !== 201) throw new Error(`pre-creating sessions: ${response.status} ${JSON.stringify(body)}`)
      ids.push(body.id)
    }
  }))
  return ids
}

const getSessionLoad = (ids: ReadonlyArray<string>): CannonOptions => ({
  path: "/checkout_sessions/" + ids[0],
  headers: authHeaders,
  paths: ids.map((id) => `/checkout_sessions/${id}`),
  expected: 200
})

const createSessionLoad: CannonOptions = {
  path: "/checkout_sessions",
  method: "POST",
  headers: jsonHeaders,
  body: createBody,
  expected: 201
}

const floorReadLoad: CannonOptions = {
  path: "/read/0",
  paths: Array.from({ length: 500 }, (_, i) => `/read/${i}`),
  expected: 200
}

/**
 * The transaction on the 500 rows in rotation: what the stack costs per write, not how fast one
 * row's lock can change hands (a single hot row holds every writer behind each commit's flush).
 */
const floorWriteLoad: CannonOptions = {
  path: "/write/0",
  paths: Array.from({ length: 500 }, (_, i) => `/write/${i}`),
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ quantity: 1 }),
  expected: 201
}

/** `GET /healthz`: a route with no statement, what a request costs in the HTTP stack itself. */
const healthzLoad: CannonOptions = { path: "/healthz", expected: 200 }

/** GET session, create session and the full flow against one of our servers. */
const benchOurs = async (target: string, proc: NodeProcess) => {
  const ids = await preCreateSessions(proc)
  if (scenarios.has("healthz")) await cannonScenario(target, proc, "healthz", healthzLoad)
  if (scenarios.has("get")) await cannonScenario(target, proc, "get_session", getSessionLoad(ids))
  if (scenarios.has("create")) await cannonScenario(target, proc, "create_session", createSessionLoad)
  if (scenarios.has("flow")) await flowScenario(target, proc, "full_flow")
  if (scenarios.has("flow-2026-04-17")) await flowScenario(target, proc, "full_flow_2026_04_17", "2026-04-17")
  recordPeaks(target, proc)
}

/** The full flow at each concurrency, `--rounds` times after a warm-up, in the agents' `apiVersion`. */
const flowScenario = async (
  target: string,
  proc: NodeProcess,
  scenario: "full_flow" | "full_flow_2026_04_17",
  apiVersion?: string
) => {
  const flow = (agents: number, durationMillis: number) =>
    runFlowProcess({
      baseUrls: [proc.baseUrl],
      apiKey: API_KEY,
      agents,
      durationMillis,
      ...(apiVersion !== undefined ? { apiVersion } : {})
    }, pin)
  await flow(16, 5_000)
  for (const agents of levels) {
    const sampler = sampleRss([proc.pid], 200)
    const runs: Array<{ readonly stats: FlowStats; readonly cpu: CpuUse }> = []
    for (let round = 0; round < measureRounds; round++) {
      const meter = cpuMeter([proc.pid], childrenOf(proc.pid))
      runs.push({ stats: await flow(agents, perRunSeconds * 1000), cpu: meter.stop() })
    }
    sampler.stop()
    const rate = (run: { readonly stats: FlowStats }) => run.stats.checkouts / run.stats.durationSeconds
    const median = medianOf(runs, rate)
    record({ ...flowRow(target, median.stats, sampler.peak()[0] ?? 0, median.cpu, scenario), rounds: runs.map(rate) })
  }
}

/**
 * The peak RSS of our server and, for the embedded store, of its database process, and the pages
 * both hold (the `node` binary's), which the sum of their peaks counts twice.
 */
const recordPeaks = (target: string, proc: NodeProcess) => {
  peaks[target] = (memoryOf(proc.pid)?.hwm ?? 0) / MB
  const children = childrenOf(proc.pid)
  const database = children.reduce((sum, pid) => sum + (memoryOf(pid)?.hwm ?? 0), 0)
  if (database > 0) databasePeaks[target] = database / MB
  const shared = children.reduce((sum, pid) => sum + sharedFileBytes(proc.pid, pid), 0)
  if (shared > 0) sharedWithDatabase[target] = shared / MB
}

// ---------------------------------------------------------------------------------------------
// Paired runs: ours and the floor back to back

/**
 * The ratios of the targets measured in pairs. Request rates on a shared VM drift by up to 2×
 * within minutes, and the main runs measure the floor and our server minutes apart; here both run
 * at once (on databases of their own), each pair is measured back to back, the order alternates
 * from one round to the next (floor first, then ours first), and the targets take the median
 * ratio of the `--pairs` rounds.
 */
/**
 * The floor's read stands for our GET only if it moves a document of the same size: prints both
 * and notes a difference of more than 10 % in the results.
 */
const compareDocumentSizes = async (ours: NodeProcess, floor: NodeProcess, sessionId: string) => {
  const size = async (url: string, headers: Record<string, string>) =>
    Buffer.byteLength(await (await fetch(url, { headers })).text())
  const session = await size(`${ours.baseUrl}/checkout_sessions/${sessionId}`, authHeaders)
  const document = await size(`${floor.baseUrl}/read/0`, {})
  log(`  a GET session answers ${session} bytes, the floor's read ${document} bytes`)
  if (Math.abs(document - session) > session / 10) {
    notes.push(`the floor's read answers ${document} bytes, a GET session ${session}: the read is not comparable`)
  }
}

const pairedRuns = async (catalogFile: string) => {
  log(`\n[pairs] our server and the floor back to back, ${pairRounds} rounds, alternating order`)
  const floorDb = await createDatabase(ADMIN_URL, "bench_floor_pairs")
  const oursDb = await createDatabase(ADMIN_URL, "bench_acp_pairs")
  try {
    const floor = await startFloor("floor-pairs", floorDb.url)
    const ours = await startOurs("postgres-pairs", catalogFile, { DATABASE_URL: oursDb.url })
    const ids = await preCreateSessions(ours)
    await compareDocumentSizes(ours, floor, ids[0]!)
    const kinds = [
      ...(scenarios.has("get") ? [["get_session", getSessionLoad(ids), floorReadLoad] as const] : []),
      ...(scenarios.has("create") ? [["create_session", createSessionLoad, floorWriteLoad] as const] : [])
    ]
    for (const [scenario, oursLoad, floorLoad] of kinds) {
      await warmUp(ours, oursLoad)
      await warmUp(floor, floorLoad)
      for (const connections of levels) {
        for (let round = 1; round <= pairRounds; round++) {
          // Each half starts on a quiet PostgreSQL (`settlePostgres`: no half pays for the other's
          // checkpoint or autovacuum) and a server just warmed at the same concurrency: with the
          // order alternating, one server's half otherwise followed its own last run and the
          // other's followed seconds of idling, and the ratios alternated with the order.
          const runOurs = () =>
            settlePostgres(ADMIN_URL).then(() => warmUp(ours, oursLoad, connections, 2)).then(() =>
              measure("postgres", ours, scenario, oursLoad, connections, 1)
            )
          const runFloor = () =>
            settlePostgres(ADMIN_URL).then(() => warmUp(floor, floorLoad, connections, 2)).then(() =>
              measure(
                "floor",
                floor,
                scenario === "get_session" ? "floor_read" : "floor_write",
                floorLoad,
                connections,
                1
              )
            )
          const [o, f] = round % 2 === 1
            ? await runFloor().then(async (f) => [await runOurs(), f] as const)
            : await runOurs().then(async (o) => [o, await runFloor()] as const)
          const pair = {
            connections,
            round,
            ours: o.requestsPerSecond,
            floor: f.requestsPerSecond,
            oursCpuMicros: serverMicrosPerRequest(o),
            floorCpuMicros: serverMicrosPerRequest(f),
            errors: o.errors + f.errors
          }
          pairs[scenario].push(pair)
          log(
            `  ${scenario.padEnd(15)} c=${String(connections).padStart(3)} round ${round}: ours ${
              o.requestsPerSecond.toFixed(0).padStart(6)
            }` +
              ` floor ${f.requestsPerSecond.toFixed(0).padStart(6)} req/s → ${pct(pair.ours / pair.floor)}` +
              `  server CPU ${pair.oursCpuMicros.toFixed(0)} / ${pair.floorCpuMicros.toFixed(0)} µs per request` +
              `${pair.errors > 0 ? `  errors ${pair.errors}` : ""}  cpu other ${
                Math.max(o.cpu.other, f.cpu.other).toFixed(2)
              }`
          )
          for (const row of [o, f]) {
            if (row.errors > 0) {
              log(`      ! ${row.target}: ${row.errors} errors, statuses ${JSON.stringify(row.statusCounts ?? {})}`)
            }
          }
        }
      }
    }
    await stop(ours)
    await stop(floor)
  } finally {
    await oursDb.drop()
    await floorDb.drop()
  }
}

// ---------------------------------------------------------------------------------------------
// Bench

/** Where the profiled server's time went (with `--profile`), from the profile it left in `dir`. */
const printProfile = (server: string, dir: string | undefined) => {
  const file = dir === undefined ? undefined : readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))
  if (file === undefined) return
  log(`\nCPU profile of ${server}: ${join(dir!, file)}`)
  log(summarizeCpuProfile(JSON.parse(readFileSync(join(dir!, file), "utf8")), 30))
}

/** Pins PostgreSQL beside the load generator (given back at the end) and says where everything runs. */
const placement = (pgUp: boolean) => {
  const generator = hasWrk ? "wrk" : "autocannon in a child process (install wrk for a lighter load generator)"
  if (!pin) {
    notes.push(`Not pinned (--no-pin, or no taskset or one core): servers, ${generator}, PostgreSQL share every core.`)
  } else {
    const postgres = pgUp ? pinPostgres() : { moved: 0, restore: () => {} }
    onCleanup(postgres.restore)
    notes.push(
      `Pinned: the server under test on core ${SERVER_CORES} alone; the load generator (${generator}), the bench and ` +
        (postgres.moved > 0
          ? `PostgreSQL (${postgres.moved} processes moved, given back at the end)`
          : "the database") +
        ` on cores ${LOAD_CORES}.`
    )
  }
  log(notes[notes.length - 1]!)
}

const bench = async () => {
  const catalogFile = benchCatalogFile()
  const wanted = new Set(args.targets.split(",").map((t) => t.trim()))
  const pgUp = (wanted.has("floor") || wanted.has("postgres")) && (await postgresReachable(ADMIN_URL))
  let pgVersion: string | undefined
  if (!pgUp && (wanted.has("floor") || wanted.has("postgres"))) {
    notes.push(`PostgreSQL at ${ADMIN_URL} not reachable: floor and postgres targets skipped.`)
    log(notes[notes.length - 1]!)
  }
  if (pgUp) {
    const admin = sqlClient(ADMIN_URL)
    pgVersion = String((await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v"))[0]?.v)
    await admin.close()
  }
  log(`Bench: ${perRunSeconds} s per run, concurrency ${levels.join(", ")}; work dir ${workDir}`)
  placement(pgUp)

  if (wanted.has("bare")) {
    log("\n[bare] Node http, fixed JSON body")
    const port = await freePort()
    const proc = await start("bare", ["-e", BARE_SERVER], { PORT: String(port) }, port).catch(async (e) => {
      throw e
    })
    await cannonScenario("bare", proc, "bare", { path: "/", expected: 200 })
    peaks["bare"] = (memoryOf(proc.pid)?.hwm ?? 0) / MB
    await stop(proc)
  }

  if (wanted.has("stack")) {
    for (const layer of STACK_LAYERS) {
      log(`\n[stack-${layer}] the HTTP stack up to ${layer}, GET /healthz`)
      const proc = await startStackLayer(layer)
      await cannonScenario(`stack-${layer}`, proc, "healthz", healthzLoad)
      peaks[`stack-${layer}`] = (memoryOf(proc.pid)?.hwm ?? 0) / MB
      await stop(proc)
    }
  }

  if (pgUp && wanted.has("floor")) {
    log("\n[floor] HttpApi + @effect/sql-pg on PostgreSQL")
    const db = await createDatabase(ADMIN_URL, "bench_floor")
    const profileDir = args.profile ? join(workDir, "floor-profile") : undefined
    try {
      const proc = await startFloor("floor", db.url, profileDir)
      if (scenarios.has("healthz")) await cannonScenario("floor", proc, "healthz", healthzLoad)
      await cannonScenario("floor", proc, "floor_read", floorReadLoad)
      await cannonScenario("floor", proc, "floor_write", floorWriteLoad)
      peaks["floor"] = (memoryOf(proc.pid)?.hwm ?? 0) / MB
      await stop(proc)
      printProfile("the floor", profileDir)
    } finally {
      await db.drop()
    }
  }

  if (pgUp && wanted.has("postgres")) {
    log("\n[postgres] our server on PostgreSQL")
    const db = await createDatabase(ADMIN_URL, "bench_acp")
    const profileDir = args.profile ? join(workDir, "profile") : undefined
    try {
      const proc = await startOurs("postgres", catalogFile, { DATABASE_URL: db.url }, profileDir)
      await benchOurs("postgres", proc)
      await stop(proc)
      printProfile("the PostgreSQL server", profileDir)
    } finally {
      await db.drop()
    }
  }

  if (
    pgUp && wanted.has("floor") && wanted.has("postgres") && pairRounds > 0 &&
    (scenarios.has("get") || scenarios.has("create"))
  ) {
    await pairedRuns(catalogFile)
  }

  if (wanted.has("embedded")) {
    log("\n[embedded] our server on PGlite (DATA_DIR in a temp dir)")
    const proc = await startOurs("embedded", catalogFile, {})
    // Its database process runs where PostgreSQL runs for the other targets, off the server's core.
    if (pin) { for (const child of childrenOf(proc.pid)) movePid(child, LOAD_CORES) }
    await benchOurs("embedded", proc)
    await stop(proc)
  }

  const info = await machine(pgVersion)
  const targets = evaluateTargets()
  log("\nTargets:")
  for (const t of targets) {
    log(`  ${t.met === undefined ? "—  " : t.met ? "met" : "MISSED"}  ${t.name}: ${t.measured} (goal ${t.goal})`)
  }
  writeResults(
    "",
    {
      machine: info,
      options: { perRunSeconds, levels, logLevel: args["log-level"] ?? "Info" },
      targets,
      rows,
      pairs,
      peakRssMb: peaks,
      notes
    },
    markdown(info, targets),
    info
  )
}

if (args.soak) await import("./soak.ts")
else await runMain(bench)
