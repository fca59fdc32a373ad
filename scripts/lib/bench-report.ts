/**
 * The bench's and the soak's results: the machine they ran on, the targets judged from the rows
 * and the paired runs, and the Markdown and JSON files under bench/results (or --out).
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, hostname, totalmem } from "node:os"
import {
  ADMIN_URL,
  args,
  cpuText,
  databasePeaks,
  levels,
  log,
  measureRounds,
  modeName,
  notes,
  pairRounds,
  pairs,
  peaks,
  perRunSeconds,
  type Row,
  rows,
  serverMicrosPerRequest,
  sharedWithDatabase,
  spreadText,
  tableLines
} from "./bench-setup.ts"
import { PROJECT_ROOT, sqlClient } from "./processes.ts"
import { freeResultsBase } from "./results-path.ts"

const isFlow = (row: Row) => row.scenario.startsWith("full_flow")

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * Per concurrency: the ratios ours / floor of the pairs and their median (none without pairs), and
 * the median of the floor's server CPU per request over ours.
 */
const pairedRatios = (scenario: keyof typeof pairs) =>
  levels.flatMap((connections) => {
    const measured = pairs[scenario].filter((p) => p.connections === connections && p.floor > 0)
    const ratios = measured.map((p) => p.ours / p.floor)
    const cpuRatios = measured.filter((p) => p.oursCpuMicros > 0).map((p) => p.floorCpuMicros / p.oursCpuMicros)
    return ratios.length === 0 ? [] : [{
      connections,
      ratios,
      median: median(ratios),
      cpuMedian: cpuRatios.length === 0 ? Number.NaN : median(cpuRatios)
    }]
  })

/**
 * How this machine's cores idle. On a virtual machine a core that halts between requests is
 * woken at a cost the next request's CPU time shows, most with one request at a time: figures at
 * low concurrency are comparable only between machines that idle alike.
 */
const cpuIdle = (): string => {
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8").trim()
    } catch {
      return undefined
    }
  }
  const driver = read("/sys/devices/system/cpu/cpuidle/current_driver")
  const polling = read("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
  if (driver === undefined) return "unknown"
  return polling === undefined ? `cpuidle ${driver}` : `cpuidle ${driver}, guest halt polling ${polling} ns`
}

/** The version of the PostgreSQL server at `ADMIN_URL`. */
export const postgresVersion = async (): Promise<string> => {
  const admin = sqlClient(ADMIN_URL)
  try {
    return String((await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v"))[0]?.v)
  } finally {
    await admin.close()
  }
}

export const machine = async (pgVersion?: string) => {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8")
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown"
  const git = (...gitArgs: Array<string>) =>
    execFileSync("git", gitArgs, { cwd: PROJECT_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  let commit = "unknown"
  let changed = false
  try {
    commit = git("rev-parse", "HEAD")
    changed = git("status", "--porcelain", "--untracked-files=no") !== ""
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    host: hostname(),
    cpu: model,
    cores: cpus().length,
    idle: cpuIdle(),
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    postgres: pgVersion ?? "not used",
    commit: commit.slice(0, 12),
    /** Whether tracked files differed from the commit: the run measured those changes too. */
    changed
  }
}

/** The machine's lines of a results file: what the figures depend on. */
const machineTable = (info: Machine) => [
  "| | |",
  "|---|---|",
  `| CPU | ${info.cpu}, ${info.cores} cores |`,
  `| core idle | ${info.idle} |`,
  `| memory | ${info.memoryGb} GB |`,
  `| Node | ${info.node} |`,
  `| PostgreSQL | ${info.postgres} (same machine, loopback) |`,
  `| commit | ${info.commit}${info.changed ? " (plus changes in the working tree)" : ""} |`
]

const find = (target: string, scenario: Row["scenario"], connections: number) =>
  rows.find((r) => r.target === target && r.scenario === scenario && r.connections === connections)

export const pct = (value: number) => `${(value * 100).toFixed(0)} %`

export interface Target {
  readonly name: string
  readonly goal: string
  readonly measured: string
  readonly met: boolean | undefined
}

export const evaluateTargets = (): Array<Target> => {
  const targets: Array<Target> = []
  const ratio = (scenario: Row["scenario"], floor: Row["scenario"], connections: number) => {
    const ours = find("postgres", scenario, connections)
    const base = find("floor", floor, connections)
    return ours && base && base.requestsPerSecond > 0 ? ours.requestsPerSecond / base.requestsPerSecond : undefined
  }
  const ratioTarget = (
    name: string,
    scenario: "get_session" | "create_session",
    floor: Row["scenario"],
    goal: number
  ) => {
    const paired = pairedRatios(scenario)
    if (paired.length > 0) {
      const errors = pairs[scenario].reduce((sum, p) => sum + p.errors, 0)
      targets.push({
        name,
        goal: `≥ ${pct(goal)} of the floor, every concurrency`,
        measured: `median of ${pairRounds} back-to-back pairs: ` +
          paired.map((p) => `c=${p.connections}: ${pct(p.median)}`).join(", ") +
          (errors > 0 ? ` (${errors} errors)` : "") +
          `; the floor's server CPU per request over ours: ` +
          paired.map((p) => `c=${p.connections}: ${pct(p.cpuMedian)}`).join(", "),
        met: paired.every((p) => p.median >= goal) && errors === 0
      })
      return
    }
    const ratios = levels.map((c) => [c, ratio(scenario, floor, c)] as const).filter(([, r]) => r !== undefined)
    targets.push({
      name,
      goal: `≥ ${pct(goal)} of the floor, every concurrency`,
      measured: ratios.length === 0 ? "not measured" : ratios.map(([c, r]) => `c=${c}: ${pct(r!)}`).join(", "),
      met: ratios.length === 0 ? undefined : ratios.every(([, r]) => r! >= goal)
    })
  }
  ratioTarget("GET session on PostgreSQL vs floor read", "get_session", "floor_read", 1.0)
  ratioTarget("create session on PostgreSQL vs floor write", "create_session", "floor_write", 1.2)
  const flow = find("postgres", "full_flow", 64)
  // The goal of 200/s was set on a machine whose floor write ran 1,100–1,400 transactions/s; the
  // same proportion of this machine's floor write says what 200 means here.
  const floorWrite = find("floor", "floor_write", 64)
  const scaled = floorWrite
    ? `; scaled to this machine's floor write (${floorWrite.requestsPerSecond.toFixed(0)} tx/s at c=64), 200/s is ${
      (200 * floorWrite.requestsPerSecond / 1400).toFixed(0)
    }–${(200 * floorWrite.requestsPerSecond / 1100).toFixed(0)} checkouts/s`
    : ""
  targets.push({
    name: "full flow on PostgreSQL, 64 agents",
    goal: "≥ 200 checkouts/s, request p99 < 250 ms, 0 errors",
    measured: flow
      ? `${flow.checkoutsPerSecond!.toFixed(0)} checkouts/s, p99 ${
        flow.p99.toFixed(0)
      } ms, ${flow.errors} errors${scaled}`
      : "not measured",
    met: flow ? flow.checkoutsPerSecond! >= 200 && flow.p99 < 250 && flow.errors === 0 : undefined
  })
  if (peaks["postgres"] !== undefined) {
    targets.push({
      name: "peak RSS of our server on PostgreSQL",
      goal: "< 250 MB",
      measured: `${peaks["postgres"].toFixed(0)} MB`,
      met: peaks["postgres"] < 250
    })
  }
  if (peaks["embedded"] !== undefined) {
    // Both are Node processes: the pages of the node binary are in the RSS of each, once in memory.
    const sum = peaks["embedded"] + (databasePeaks["embedded"] ?? 0)
    const shared = sharedWithDatabase["embedded"] ?? 0
    const together = sum - shared
    targets.push({
      name: "peak memory on the embedded store, server and database process together",
      goal: "≤ 300 MB",
      measured: `${together.toFixed(0)} MB: peak RSS of the server ${
        peaks["embedded"].toFixed(0)
      } MB + database process ${(databasePeaks["embedded"] ?? 0).toFixed(0)} MB = ${sum.toFixed(0)} MB, less ${
        shared.toFixed(0)
      } MB of pages both hold (counted twice in that sum)`,
      met: together <= 300
    })
  }
  return targets
}

export const markdown = (info: Machine, targets: ReadonlyArray<Target>) => {
  const lines: Array<string> = []
  lines.push(
    `# Benchmark${modeName === "targets" ? "" : ` (${modeName})`} ${info.date.slice(0, 10)} on ${info.host}`,
    ""
  )
  lines.push(...machineTable(info))
  lines.push(
    `| runs | ${perRunSeconds} s each, ${measureRounds} rounds (the median, and the range), after a 5 s warm-up |`
  )
  lines.push(
    `| server | LOG_LEVEL ${args["log-level"] ?? "Info (default)"}, pool ${args.pool}, delegate rate limit raised |`,
    ""
  )
  lines.push("## Targets", "", "| target | goal | measured | met |", "|---|---|---|---|")
  for (const t of targets) {
    lines.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.met === undefined ? "—" : t.met ? "yes" : "**no**"} |`)
  }
  lines.push("", "## Results", "")
  lines.push(
    "Latencies in ms. `ours/bare` and `ours/floor` compare requests/s at the same concurrency (floor: read for GET, write for create).",
    ""
  )
  lines.push(
    "CPU is in cores busy during the run: server / database (PostgreSQL, or the embedded store's database process) / load generator / other (other users of the machine: noise).",
    ""
  )
  lines.push(
    "| target | scenario | conc. | req/s | p50 | p99 | errors | peak RSS MB | checkouts/s | checkout p99 | ours/bare | ours/floor | CPU srv/pg/gen/other | server µs/request |"
  )
  lines.push("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
  for (const r of rows) {
    const bare = find("bare", "bare", r.connections)
    const floor = r.scenario === "get_session"
      ? find("floor", "floor_read", r.connections)
      : r.scenario === "create_session"
      ? find("floor", "floor_write", r.connections)
      : undefined
    const ours = r.target === "postgres" || r.target === "embedded"
    lines.push(
      `| ${r.target} | ${r.scenario} | ${r.connections} | ${r.requestsPerSecond.toFixed(0)}${
        isFlow(r) ? "" : spreadText(r)
      } | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${r.peakRssMb.toFixed(0)} | ${
        r.checkoutsPerSecond?.toFixed(1) ?? ""
      }${isFlow(r) ? spreadText(r) : ""} | ${r.checkoutP99?.toFixed(0) ?? ""} | ${
        ours && bare && !isFlow(r) ? pct(r.requestsPerSecond / bare.requestsPerSecond) : ""
      } | ${ours && floor ? pct(r.requestsPerSecond / floor.requestsPerSecond) : ""} | ${cpuText(r.cpu)} | ${
        serverMicrosPerRequest(r).toFixed(0)
      } |`
    )
  }
  lines.push(
    "",
    "Peak RSS over the whole run (VmHWM): " +
      Object.entries(peaks).map(([t, v]) =>
        `${t} ${v.toFixed(0)} MB${
          databasePeaks[t] === undefined ? "" : ` (+ database process ${databasePeaks[t]!.toFixed(0)} MB)`
        }`
      ).join(", ")
  )
  if (pairs.get_session.length + pairs.create_session.length > 0) {
    lines.push("", "## Paired runs", "")
    lines.push(
      `Both servers running at once on databases of their own; each pair measured back to back (${perRunSeconds} s each), ` +
        "floor first in odd rounds and ours first in even ones. The targets use the median ratio.",
      ""
    )
    lines.push(
      "Server CPU per request (its cores over its rate) tells whether a ratio moved with the work per request or with the machine.",
      ""
    )
    lines.push(
      "| scenario | conc. | ours / floor req/s per round | ratios | median | server CPU µs per request, ours / floor | floor CPU / ours (median) |",
      "|---|---:|---|---|---:|---|---:|"
    )
    for (const scenario of ["get_session", "create_session"] as const) {
      for (const p of pairedRatios(scenario)) {
        const rounds = pairs[scenario].filter((pair) => pair.connections === p.connections)
        lines.push(
          `| ${scenario} | ${p.connections} | ${
            rounds.map((r) => `${r.ours.toFixed(0)} / ${r.floor.toFixed(0)}`).join(", ")
          } | ${p.ratios.map(pct).join(", ")} | ${pct(p.median)} | ${
            rounds.map((r) => `${r.oursCpuMicros.toFixed(0)} / ${r.floorCpuMicros.toFixed(0)}`).join(", ")
          } | ${pct(p.cpuMedian)} |`
        )
      }
    }
  }
  lines.push(...notesSection())
  return lines.join("\n") + "\n"
}

const notesSection = () => notes.length === 0 ? [] : ["", "## Notes", "", ...notes.map((n) => `- ${n}`)]

/**
 * The results files of a mode that prints its own table (`tableLine`): the machine, then those
 * lines, and `data` with every figure in the JSON.
 */
export const writeTable = async (title: string, data: Record<string, unknown>, pgVersion?: string) => {
  const info = await machine(pgVersion)
  const md = [
    `# ${title} ${info.date.slice(0, 10)} on ${info.host}`,
    "",
    ...machineTable(info),
    "",
    ...tableLines,
    ...notesSection()
  ]
  writeResults(
    `-${modeName}`,
    { machine: info, mode: modeName, options: { perRunSeconds, levels, rounds: measureRounds }, ...data, notes },
    md.join("\n") + "\n",
    info
  )
}

export const writeResults = (suffix: string, json: unknown, md: string, info: { date: string; host: string }) => {
  if (args["no-write"]) return
  mkdirSync(args.out, { recursive: true })
  const base = freeResultsBase(args.out, `${info.date.slice(0, 10)}-${info.host}${suffix}`, existsSync)
  writeFileSync(`${base}.json`, JSON.stringify(json, null, 2) + "\n")
  writeFileSync(`${base}.md`, md)
  log(`\nResults: ${base}.md and .json`)
}

export type Machine = Awaited<ReturnType<typeof machine>>

export interface SoakCheck {
  readonly check: string
  readonly detail: string
  readonly ok: boolean
  readonly informational?: boolean
}

/** The soak's pass/fail table on stdout. */
export const printSoakChecks = (checks: ReadonlyArray<SoakCheck>) => {
  log("\n| check | result | detail |\n|---|---|---|")
  const verdict = (c: SoakCheck) => (c.ok ? "pass" : c.informational ? "missed" : "FAIL")
  for (const c of checks) log(`| ${c.check} | ${verdict(c)} | ${c.detail} |`)
}

/** The soak's results file. */
export const soakMarkdown = (
  info: Machine,
  run: { seconds: number; agents: number; row: Row; checks: ReadonlyArray<SoakCheck>; ok: boolean }
) => {
  const { agents, checks, ok, row, seconds } = run
  return [
    `# Soak ${info.date.slice(0, 10)} on ${info.host}`,
    "",
    `${info.cpu}, ${info.cores} cores (core idle: ${info.idle}), ${info.memoryGb} GB, Node ${info.node}, PostgreSQL ${info.postgres}, commit ${info.commit}${
      info.changed ? " (plus changes in the working tree)" : ""
    }.`,
    `${seconds} s, ${agents} agents, two server processes on one database, requests round-robin over both.`,
    `Flow: ${row.checkoutsPerSecond!.toFixed(1)} checkouts/s, ${row.requestsPerSecond.toFixed(0)} req/s, request p50 ${
      row.p50.toFixed(0)
    } ms / p99 ${row.p99.toFixed(0)} ms; CPU (cores) servers/PostgreSQL/load generator/other ${cpuText(row.cpu)}.`,
    "",
    "| check | result | detail |",
    "|---|---|---|",
    ...checks.map((c) => `| ${c.check} | ${c.ok ? "pass" : c.informational ? "missed" : "**FAIL**"} | ${c.detail} |`),
    "",
    `Result: ${ok ? "passed" : "failed"}.`,
    ""
  ].join("\n")
}
