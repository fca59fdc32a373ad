/**
 * The modes that measure targets (`targets`, `pairs`, `flow`, `embedded`; which servers and
 * scenarios each runs: `MODES` in `bench-setup.ts`).
 *
 * Starts, one at a time on loopback with random free ports,
 *   - `bare`: a bare Node `http` server answering a fixed JSON body (the machine's ceiling),
 *   - `floor`: `bench-floor.ts`, a minimal HttpApi + @effect/sql-pg server on the same
 *     PostgreSQL (a primary-key read; a FOR UPDATE / UPDATE / INSERT transaction),
 *   - `postgres`: our server on a fresh PostgreSQL database (skipped when PostgreSQL is not reachable),
 *   - `embedded`: our server on the embedded store (PGlite in a temporary DATA_DIR),
 * and measures, at each concurrency: GET session (rotating over pre-created sessions), create
 * session, and the full flow create → update → tokenize → complete (N agent loops; completed
 * checkouts per second). Then, with both floor and postgres targets, the paired runs: floor and
 * our server running at once, GET and create measured in back-to-back pairs in alternating order
 * (--pairs rounds); the GET and create targets use the median ratio.
 */
import { join } from "node:path"
import { LOAD_CORES, movePid } from "./affinity.ts"
import { createSessionLoad, floorReadLoad, floorWriteLoad, getSessionLoad, preCreateSessions } from "./bench-loads.ts"
import { cannonScenario } from "./bench-measure.ts"
import { pairedRuns } from "./bench-pairs.ts"
import { evaluateTargets, machine, markdown, postgresVersion, writeResults } from "./bench-report.ts"
import {
  ADMIN_URL,
  API_KEY,
  args,
  BARE_SERVER,
  benchCatalogFile,
  databasePeaks,
  flowRow,
  flowScenarioOf,
  flowVersions,
  levels,
  log,
  MB,
  measureRounds,
  modeName,
  notes,
  pairRounds,
  pairs,
  peaks,
  perRunSeconds,
  pin,
  placeProcesses,
  record,
  rows,
  scenarios,
  sharedWithDatabase,
  start,
  startFloor,
  startOurs,
  stop,
  stripeFake,
  targets,
  useStripeFake,
  viaStripe,
  workDir
} from "./bench-setup.ts"
import { printProfile } from "./cpu-profile.ts"
import { medianOf } from "./figures.ts"
import { type FlowStats } from "./flow.ts"
import { hasWrk, runFlowProcess } from "./load.ts"
import {
  childrenOf,
  cpuMeter,
  type CpuUse,
  createDatabase,
  freePort,
  memoryOf,
  type NodeProcess,
  postgresReachable,
  sampleRss
} from "./processes.ts"
import { sharedFileBytes } from "./shared-pages.ts"

/** GET session, create session and the full flow against one of our servers. */
const benchOurs = async (target: string, proc: NodeProcess) => {
  const ids = await preCreateSessions(proc)
  if (scenarios.has("get")) await cannonScenario(target, proc, "get_session", getSessionLoad(ids))
  if (scenarios.has("create")) await cannonScenario(target, proc, "create_session", createSessionLoad)
  if (scenarios.has("flow")) { for (const version of flowVersions) await flowScenario(target, proc, version) }
  recordPeaks(target, proc)
}

/** The full flow at each concurrency, `--rounds` times after a warm-up, its agents speaking `apiVersion`. */
const flowScenario = async (target: string, proc: NodeProcess, apiVersion: string) => {
  const flow = (agents: number, durationMillis: number) =>
    runFlowProcess({
      baseUrls: [proc.baseUrl],
      apiKey: API_KEY,
      agents,
      durationMillis,
      apiVersion,
      ...(stripeFake === undefined ? {} : { stripe: stripeFake })
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
    const scenario = flowScenarioOf(apiVersion)
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
// Bench

export const benchTargets = async () => {
  const catalogFile = benchCatalogFile()
  if (viaStripe) {
    const fake = await useStripeFake()
    log(`The flow pays through the Stripe-compatible test server at ${fake.base} (--stripe), on the load cores.`)
  }
  const pgUp = (targets.has("floor") || targets.has("postgres")) && (await postgresReachable(ADMIN_URL))
  if (!pgUp && (targets.has("floor") || targets.has("postgres"))) {
    notes.push(`PostgreSQL at ${ADMIN_URL} not reachable: floor and postgres targets skipped.`)
    log(notes[notes.length - 1]!)
  }
  const pgVersion = pgUp ? await postgresVersion() : undefined
  log(`Bench: ${perRunSeconds} s per run, concurrency ${levels.join(", ")}; work dir ${workDir}`)
  const generator = `the load generator (${
    hasWrk ? "wrk" : "autocannon in a child process; install wrk for a lighter one"
  })`
  placeProcesses(
    pgUp,
    !scenarios.has("get") && !scenarios.has("create")
      ? "the flow's agents"
      : scenarios.has("flow")
      ? `${generator} and the flow's agents`
      : generator
  )

  if (targets.has("bare")) {
    log("\n[bare] Node http, fixed JSON body")
    const port = await freePort()
    const proc = await start("bare", ["-e", BARE_SERVER], { PORT: String(port) }, port)
    await cannonScenario("bare", proc, "bare", { path: "/", expected: 200 })
    peaks["bare"] = (memoryOf(proc.pid)?.hwm ?? 0) / MB
    await stop(proc)
  }

  if (pgUp && targets.has("floor")) {
    log("\n[floor] HttpApi + @effect/sql-pg on PostgreSQL")
    const db = await createDatabase(ADMIN_URL, "bench_floor")
    const profileDir = args.profile ? join(workDir, "floor-profile") : undefined
    try {
      const proc = await startFloor("floor", db.url, profileDir)
      await cannonScenario("floor", proc, "floor_read", floorReadLoad)
      await cannonScenario("floor", proc, "floor_write", floorWriteLoad)
      peaks["floor"] = (memoryOf(proc.pid)?.hwm ?? 0) / MB
      await stop(proc)
      printProfile("the floor", profileDir)
    } finally {
      await db.drop()
    }
  }

  if (pgUp && targets.has("postgres")) {
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
    pgUp && targets.has("floor") && targets.has("postgres") && pairRounds > 0 &&
    (scenarios.has("get") || scenarios.has("create"))
  ) {
    await pairedRuns(catalogFile)
  }

  if (targets.has("embedded")) {
    log("\n[embedded] our server on PGlite (DATA_DIR in a temp dir)")
    const proc = await startOurs("embedded", catalogFile, {})
    // Its database process runs where PostgreSQL runs for the other targets, off the server's core.
    if (pin) { for (const child of childrenOf(proc.pid)) movePid(child, LOAD_CORES) }
    await benchOurs("embedded", proc)
    await stop(proc)
  }

  const info = await machine(pgVersion)
  const judged = evaluateTargets()
  log("\nTargets:")
  for (const t of judged) {
    log(`  ${t.met === undefined ? "—  " : t.met ? "met" : "MISSED"}  ${t.name}: ${t.measured} (goal ${t.goal})`)
  }
  writeResults(
    modeName === "targets" ? "" : `-${modeName}`,
    {
      machine: info,
      mode: modeName,
      options: { perRunSeconds, levels, logLevel: args["log-level"] ?? "Info" },
      targets: judged,
      rows,
      pairs,
      peakRssMb: peaks,
      notes
    },
    markdown(info, judged),
    info
  )
}
