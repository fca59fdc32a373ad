/**
 * The HTTP load generator of the bench, always a process of its own (on the load cores when
 * pinning, `affinity.ts`): wrk when it is installed (`apt-get install wrk`), else autocannon in a
 * child Node process (`cannon-worker.ts`). Both keep their connections open (keep-alive), rotate
 * over `paths`, and report requests, duration, p50/p99 and the answers with another status than
 * `expected`.
 */
import { execFileSync, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { LOAD_CORE_COUNT, LOAD_CORES, onCores } from "./affinity.ts"
import { type FlowStats, type runFlow } from "./flow.ts"
import { PROJECT_ROOT } from "./processes.ts"

export interface LoadOptions {
  readonly url: string
  readonly connections: number
  readonly seconds: number
  readonly method?: string
  readonly body?: string
  readonly headers?: Record<string, string>
  /** Paths to rotate over (each request the next); the URL's path otherwise. */
  readonly paths?: ReadonlyArray<string>
  /** A header given a value of its own on every request (an `Idempotency-Key`). */
  readonly uniqueHeader?: string
  /** The status every answer should have. */
  readonly expected: number
}

export interface LoadResult {
  readonly requests: number
  readonly durationSeconds: number
  /** Milliseconds. */
  readonly p50: number
  readonly p99: number
  /** Answers with another status, and connection errors and timeouts. */
  readonly errors: number
  readonly generator: "wrk" | "autocannon"
}

export const hasWrk = (() => {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" })
    return true
  } catch (error) {
    // wrk --version exits 1 after printing its version.
    return (error as { status?: number }).status === 1
  }
})()

const luaString = (text: string) => JSON.stringify(text)

/** A wrk script: rotating paths, the method, headers and body, counting unexpected statuses per thread. */
const wrkScript = (options: LoadOptions) => {
  const url = new URL(options.url)
  const paths = options.paths ?? [url.pathname + url.search]
  const headers = Object.entries(options.headers ?? {}).map(([name, value]) =>
    `[${luaString(name)}] = ${luaString(value)}`
  )
  return `
local paths = { ${paths.map(luaString).join(", ")} }
local headers = { ${headers.join(", ")} }
local body = ${options.body === undefined ? "nil" : luaString(options.body)}
local method = ${luaString(options.method ?? "GET")}
local threads = {}
local i = 0
unexpected = 0
function setup(thread) table.insert(threads, thread) end
function init(args) i = math.random(#paths) end
local unique = ${options.uniqueHeader === undefined ? "nil" : luaString(options.uniqueHeader)}
local prefix = tostring(math.random(1, 1e9))
local n = 0
function request()
  i = i % #paths + 1
  if unique ~= nil then
    n = n + 1
    headers[unique] = prefix .. "-" .. n
  end
  return wrk.format(method, paths[i], headers, body)
end
function response(status, headers, body)
  if status ~= ${options.expected} then unexpected = unexpected + 1 end
end
function done(summary, latency, requests)
  local wrong = 0
  for _, thread in ipairs(threads) do wrong = wrong + thread:get("unexpected") end
  local e = summary.errors
  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    wrong + e.connect + e.read + e.write + e.timeout))
end
`
}

const runChild = (command: string, args: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()))
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} exited with ${code}: ${err.slice(-500)}`)))
  })

const resultLine = (output: string) => {
  const line = output.split("\n").find((l) => l.startsWith("RESULT "))
  if (line === undefined) throw new Error(`the load generator printed no result:\n${output.slice(-500)}`)
  return JSON.parse(line.slice("RESULT ".length))
}

/** The full flow (`flow.ts`) run by agents in a process of their own, on the load cores when `pin`. */
export const runFlowProcess = async (options: Parameters<typeof runFlow>[0], pin: boolean): Promise<FlowStats> => {
  const worker = onCores(pin, LOAD_CORES, process.execPath, [
    "--import",
    "tsx",
    join(PROJECT_ROOT, "scripts", "lib", "flow-worker.ts"),
    JSON.stringify(options)
  ])
  const r = resultLine(await runChild(worker.command, worker.args))
  return { ...r, latencies: Float64Array.from(r.latencies), checkoutLatencies: Float64Array.from(r.checkoutLatencies) }
}

/** One run of the load generator (a process of its own, on the load cores when `pin`). */
export const runLoad = async (options: LoadOptions, pin: boolean, workDir: string): Promise<LoadResult> => {
  if (hasWrk) {
    const script = join(workDir, `load-${process.pid}-${Math.random().toString(36).slice(2)}.lua`)
    writeFileSync(script, wrkScript(options))
    const threads = Math.max(1, Math.min(options.connections, pin ? LOAD_CORE_COUNT : 2))
    const wrk = onCores(pin, LOAD_CORES, "wrk", [
      `-t${threads}`,
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      "--timeout",
      "10s",
      "-s",
      script,
      options.url
    ])
    const r = resultLine(await runChild(wrk.command, wrk.args))
    return {
      requests: r.requests,
      durationSeconds: r.duration_us / 1e6,
      p50: r.p50_us / 1000,
      p99: r.p99_us / 1000,
      errors: r.errors,
      generator: "wrk"
    }
  }
  const worker = onCores(pin, LOAD_CORES, process.execPath, [
    "--import",
    "tsx",
    join(PROJECT_ROOT, "scripts", "lib", "cannon-worker.ts"),
    JSON.stringify(options)
  ])
  return { ...resultLine(await runChild(worker.command, worker.args)), generator: "autocannon" }
}
