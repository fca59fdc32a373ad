/**
 * Processes for the bench: free ports, Node child processes with their output in a file, health
 * waits, resident memory sampled from /proc, and throw-away PostgreSQL databases.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url))

/**
 * The Node arguments of our server as production runs it: package.json's `start` script is
 * `node [flags] dist/main.js` (after `prestart` builds dist/), and this returns its flags and file,
 * so the bench and the soak measure exactly what `npm start` runs; `root` is the checkout whose
 * package.json is read (an earlier build's worktree, say).
 */
export const serverNodeArgs = (root: string = PROJECT_ROOT): ReadonlyArray<string> => {
  const start = String(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts?.start ?? "")
  const match = /^node((?:\s+--\S+)*)\s+(\S+\.js)$/.exec(start.trim())
  if (match === null) throw new Error(`package.json "start" is not \`node [--flags] <file>.js\`: ${start}`)
  return [...match[1]!.split(/\s+/).filter((flag) => flag !== ""), match[2]!]
}

let built = false

/** `npm run build` (src/ → dist/, a few seconds), once per process: the bench runs the compiled server. */
export const buildServer = () => {
  if (built) return
  execFileSync("npm", ["run", "--silent", "build"], { cwd: PROJECT_ROOT, stdio: ["ignore", "inherit", "inherit"] })
  built = true
}

/**
 * The stack floor (`bench-floor.ts`, which imports only packages) transpiled to
 * `dist/bench-floor.js`, so that it runs as plain JavaScript like our server: the comparison is
 * not skewed by tsx.
 */
export const buildFloor = (): string => {
  const source = readFileSync(join(PROJECT_ROOT, "scripts", "lib", "bench-floor.ts"), "utf8")
  const output = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false }
  })
  const file = join(PROJECT_ROOT, "dist", "bench-floor.js")
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, output.outputText)
  return file
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

export interface NodeProcess {
  readonly name: string
  readonly child: ChildProcess
  readonly pid: number
  readonly baseUrl: string
  readonly logFile: string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** The last lines of its output. */
  readonly tail: (lines?: number) => string
  readonly stop: () => Promise<void>
}

/** `node <args>` in the project root with `env` (plus PATH, HOME); stdout and stderr go to `logFile`. */
export const spawnNode = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  port: number,
  logFile: string,
  /** `taskset -c` cores to run on (anywhere when absent). */
  cpus?: string
): NodeProcess => {
  const fd = openSync(logFile, "a")
  const [command, commandArgs] = cpus === undefined
    ? [process.execPath, args]
    : ["taskset", ["-c", cpus, process.execPath, ...args]]
  const child = spawn(command, commandArgs, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env },
    stdio: ["ignore", fd, fd]
  })
  closeSync(fd)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const tail = (lines = 20) => {
    try {
      return readFileSync(logFile, "utf8").split("\n").slice(-lines).join("\n")
    } catch {
      return ""
    }
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
    await exited
    clearTimeout(timer)
  }
  return { name, child, pid: child.pid ?? -1, baseUrl: `http://127.0.0.1:${port}`, logFile, exited, tail, stop }
}

/** Resolves when GET `path` answers 200; rejects with the process output if it exits or takes over `timeoutMillis`. */
export const waitHealthy = async (proc: NodeProcess, path = "/healthz", timeoutMillis = 90_000) => {
  const deadline = Date.now() + timeoutMillis
  let exited = false
  void proc.exited.then(() => (exited = true))
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${proc.name} exited before it was healthy:\n${proc.tail()}`)
    try {
      const response = await fetch(proc.baseUrl + path)
      await response.arrayBuffer()
      if (response.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw new Error(`${proc.name} not healthy after ${timeoutMillis / 1000} s:\n${proc.tail()}`)
}

/** Resident set size and its peak (VmHWM) of a process, in bytes, from /proc (undefined once gone). */
export const memoryOf = (pid: number): { rss: number; hwm: number } | undefined => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? "0") * 1024
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") }
  } catch {
    return undefined
  }
}

/** Samples the RSS of `pids` every `intervalMillis`; `stop()` returns the samples. */
export const sampleRss = (pids: ReadonlyArray<number>, intervalMillis: number) => {
  const started = Date.now()
  const samples: Array<{ t: number; rss: ReadonlyArray<number> }> = []
  const take = () => samples.push({ t: Date.now() - started, rss: pids.map((pid) => memoryOf(pid)?.rss ?? 0) })
  take()
  const timer = setInterval(take, intervalMillis)
  return {
    stop: () => {
      clearInterval(timer)
      take()
      return samples
    },
    /** The highest sample so far per pid. */
    peak: () => pids.map((_, i) => Math.max(...samples.map((s) => s.rss[i] ?? 0)))
  }
}

/** A SQL client for scripts: `query(text)` → rows; `close()`. */
export const sqlClient = (url: string) => {
  const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }))
  return {
    query: <A extends object = Record<string, unknown>>(text: string): Promise<ReadonlyArray<A>> =>
      runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text))),
    close: () => runtime.dispose()
  }
}

/** PostgreSQL at `adminUrl` answers. */
export const postgresReachable = async (adminUrl: string): Promise<boolean> => {
  const client = sqlClient(adminUrl)
  try {
    await Promise.race([client.query("SELECT 1"), sleep(5_000).then(() => Promise.reject(new Error("timeout")))])
    return true
  } catch {
    return false
  } finally {
    await client.close().catch(() => undefined)
  }
}

/** A new, empty database on the server of `adminUrl`: its URL and a function dropping it. */
export const createDatabase = async (adminUrl: string, prefix: string) => {
  const name = `${prefix}_${randomBytes(5).toString("hex")}`
  const admin = sqlClient(adminUrl)
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
      await admin.close()
    }
  }
}

export const logPath = (dir: string, name: string) => join(dir, `${name}.log`)

/** The kernel's clock ticks per second, the unit of `/proc/<pid>/stat`'s CPU times (100 where it cannot be read). */
export const TICKS_PER_SECOND = (() => {
  try {
    const hz = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
    return hz > 0 ? hz : 100
  } catch {
    return 100
  }
})()

/** utime + stime of a process (fields 14 and 15), with cutime + cstime (16, 17: its reaped children) when asked. */
export const ticksOf = (pid: number | "self", withReapedChildren = false): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const own = Number(fields[11]) + Number(fields[12])
    return withReapedChildren ? own + Number(fields[13]) + Number(fields[14]) : own
  } catch {
    return 0
  }
}

/** CPU ticks of this process and of its children that have exited (the load generators it ran). */
const selfAndChildrenTicks = (): number => ticksOf("self", true)

/** Whether the `postgres` process `pid` is the postmaster (its parent is not a `postgres` process). */
const isPostmaster = (pid: string): boolean => {
  const parent = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]
  return readFileSync(`/proc/${parent}/comm`, "utf8").trim() !== "postgres"
}

/**
 * CPU ticks of the local PostgreSQL server's processes; with `withExited`, also those of the
 * backends that have exited (the postmaster's reaped children: connections that closed).
 */
export const postgresTicks = (withExited = false): number => {
  let sum = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue
      sum += ticksOf(Number(entry), withExited && isPostmaster(entry))
    } catch {
      // gone
    }
  }
  return sum
}

/**
 * Waits until PostgreSQL is quiet before a measurement: a `CHECKPOINT` (so the pages the previous
 * run dirtied are written now, not during the next run), then until its processes use less than 5 %
 * of a core over half a second (the autovacuum of the tables the previous run wrote), for at most
 * `limitMs`: so that no half of a pair pays for the background work the other half left.
 */
export const settlePostgres = async (adminUrl: string, limitMs = 15_000): Promise<void> => {
  const client = sqlClient(adminUrl)
  try {
    await client.query("CHECKPOINT")
  } catch {
    // Not allowed for this role: the wait below still lets the background work end.
  } finally {
    await client.close()
  }
  const until = Date.now() + limitMs
  while (Date.now() < until) {
    const before = postgresTicks(true)
    await sleep(500)
    if ((postgresTicks(true) - before) / TICKS_PER_SECOND / 0.5 < 0.05) return
  }
}

const machineTicks = () => {
  const [, ...values] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/)
  const numbers = values.map(Number)
  const total = numbers.slice(0, 8).reduce((s, x) => s + x, 0)
  const idle = (numbers[3] ?? 0) + (numbers[4] ?? 0)
  return { busy: total - idle }
}

export interface CpuUse {
  /** Cores busy on the whole machine, on average over the run. */
  readonly machine: number
  readonly server: number
  readonly postgres: number
  /** The load generator: this process and the generators it ran (wrk, autocannon, the flow's agents). */
  readonly bench: number
  /** Everything else on the machine (other users' work): noise in the figures. */
  readonly other: number
}

/** Measures CPU use (in cores) over a run: the machine, the server processes, PostgreSQL, the bench. */
/** A process's children (Linux: `/proc/<pid>/task/<pid>/children`); none when it has exited. */
export const childrenOf = (pid: number): Array<number> => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((p) => p !== "").map(
      Number
    )
  } catch {
    return []
  }
}

/**
 * CPU use during a run. The database column counts PostgreSQL's processes, or `databasePids` when
 * given (the embedded store's database process).
 */
export const cpuMeter = (serverPids: ReadonlyArray<number>, databasePids: ReadonlyArray<number> = []) => {
  const started = Date.now()
  const m0 = machineTicks().busy
  const s0 = serverPids.reduce((s, pid) => s + ticksOf(pid), 0)
  const databaseTicks = () =>
    databasePids.length > 0 ? databasePids.reduce((s, pid) => s + ticksOf(pid), 0) : postgresTicks()
  const p0 = databaseTicks()
  const b0 = selfAndChildrenTicks()
  return {
    stop: (): CpuUse => {
      const seconds = Math.max(0.001, (Date.now() - started) / 1000)
      const cores = (ticks: number) => ticks / TICKS_PER_SECOND / seconds
      const machine = cores(machineTicks().busy - m0)
      const server = cores(serverPids.reduce((s, pid) => s + ticksOf(pid), 0) - s0)
      // Backends that exit during the run take their ticks with them: never below 0.
      const postgres = Math.max(0, cores(databaseTicks() - p0))
      const bench = cores(selfAndChildrenTicks() - b0)
      return { machine, server, postgres, bench, other: Math.max(0, machine - server - postgres - bench) }
    }
  }
}
