/**
 * Instructions per GET, counted by valgrind: our server's GET session against the stack floor's
 * primary-key read, on PostgreSQL, each server under `valgrind --tool=callgrind`.
 *
 * Why: on shared VMs the request rates of `npm run bench` move by up to 2× between runs of the
 * same build, more than most hot-path changes. Instructions executed do not depend on what else
 * the machine is doing; counted on the server's main thread (where the JavaScript runs) after a
 * warm-up, they repeat within a few percent, so two builds can be compared with one run each.
 * Only the main thread is counted: the JIT compiler and the GC helpers run on their own threads at
 * times of their choosing.
 *
 * How: both servers start under callgrind (about 100 s: everything runs ~50× slower), get
 * `--warmup` rounds of `--requests` GETs (4 connections) for the JIT to settle, then `--rounds`
 * measured rounds, each between a reset and a dump of the counters (`callgrind_control`).
 * Prints instructions per GET, per round and their median, and the floor's median over ours
 * (the share of the floor's rate ours would reach if both were bound by instructions alone).
 *
 * Usage: `npm run bench:instructions [-- --requests 1000 --warmup 3 --rounds 3]`.
 * Needs valgrind and PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 */
import autocannon from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { address, API_VERSION, buyer } from "./lib/acp-client.ts"
import { FLOW_ITEMS } from "./lib/flow.ts"
import {
  buildFloor,
  buildServer,
  createDatabase,
  exitWith,
  freePort,
  postgresReachable,
  PROJECT_ROOT,
  requireCommand,
  serverNodeArgs,
  sleep
} from "./lib/processes.ts"

const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    warmup: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    keep: { type: "boolean", default: false }
  }
})
const requests = Number(args.requests)
const warmupRounds = Number(args.warmup)
const rounds = Number(args.rounds)
const ADMIN_URL = process.env["BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const API_KEY = "sk_bench_instructions"
const workDir = mkdtempSync(join(tmpdir(), "acp-instructions-"))

requireCommand("valgrind", "valgrind is not installed: nothing measured.")
if (!(await postgresReachable(ADMIN_URL))) exitWith(`PostgreSQL at ${ADMIN_URL} does not answer: nothing measured.`)

interface Target {
  readonly name: "floor" | "ours"
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly dir: string
  readonly env: Record<string, string>
  paths: ReadonlyArray<string>
  readonly headers: Record<string, string>
}

/** `node [flags] file` under callgrind, in its own directory (its counter files go there). */
const startUnderCallgrind = async (
  name: Target["name"],
  file: string,
  env: Record<string, string>,
  headers: Record<string, string>
): Promise<Target> => {
  const port = await freePort()
  const dir = join(workDir, name)
  mkdirSync(dir, { recursive: true })
  const fullEnv = {
    PATH: process.env["PATH"] ?? "",
    HOME: process.env["HOME"] ?? "",
    USER: process.env["USER"] ?? "bench",
    HOST: "127.0.0.1",
    PORT: String(port),
    ...env
  }
  const log = openSync(join(dir, "server.log"), "a")
  const flags = serverNodeArgs().slice(0, -1)
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--separate-threads=yes",
      "--smc-check=all-non-file",
      "--dump-instr=no",
      `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`,
      process.execPath,
      ...flags,
      file
    ],
    { cwd: dir, env: fullEnv, stdio: ["ignore", log, log] }
  )
  closeSync(log)
  const target: Target = { name, child, baseUrl: `http://127.0.0.1:${port}`, dir, env: fullEnv, paths: [], headers }
  const deadline = Date.now() + 400_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      exitWith(`${name} exited before it was healthy:\n${readFileSync(join(dir, "server.log"), "utf8")}`)
    }
    try {
      const response = await fetch(target.baseUrl + "/healthz")
      await response.arrayBuffer()
      if (response.status === 200) return target
    } catch {
      // not listening yet
    }
    await sleep(1000)
  }
  return exitWith(`${name} not healthy after 400 s`)
}

const load = (target: Target, amount: number) =>
  new Promise<{ non2xx: number; errors: number }>((resolve, reject) => {
    let i = 0
    autocannon(
      {
        url: target.baseUrl + target.paths[0],
        connections: 4,
        amount,
        timeout: 120,
        headers: target.headers,
        requests: [{ setupRequest: (request) => ({ ...request, path: target.paths[i++ % target.paths.length]! }) }]
      },
      (error, result) => (error ? reject(error) : resolve(result))
    )
  })

/** `callgrind_control` for the server of `target` (it finds the process by the same USER/HOST). */
const control = (target: Target, option: "-z" | "-d") =>
  execFileSync("callgrind_control", [option, String(target.child.pid)], {
    env: target.env,
    cwd: target.dir,
    stdio: "ignore"
  })

/** The main thread's instruction total of the newest dump (`…-01`), once callgrind has written it. */
const lastDumpTotal = async (target: Target, before: ReadonlySet<string>): Promise<number> => {
  for (let attempt = 0; attempt < 120; attempt++) {
    const fresh = readdirSync(target.dir).filter((f) => /^callgrind\.out\.\d+\.\d+-01$/.test(f) && !before.has(f))
    for (const file of fresh) {
      const text = readFileSync(join(target.dir, file), "utf8")
      const summary = /^(?:summary|totals): (\d+)/m.exec(text)
      if (summary !== null && statSync(join(target.dir, file)).size > 0) return Number(summary[1])
    }
    await sleep(500)
  }
  return exitWith(`${target.name}: no callgrind dump appeared`)
}

const measure = async (target: Target): Promise<ReadonlyArray<number>> => {
  for (let i = 0; i < warmupRounds; i++) await load(target, requests)
  const perRequest: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    control(target, "-z")
    const result = await load(target, requests)
    if (result.non2xx + result.errors > 0) exitWith(`${target.name}: ${result.non2xx + result.errors} failed requests`)
    const before = new Set(readdirSync(target.dir))
    control(target, "-d")
    perRequest.push((await lastDumpTotal(target, before)) / requests)
    console.log(
      `  ${target.name.padEnd(5)} round ${round + 1}: ${
        Math.round(perRequest.at(-1)!).toLocaleString("en")
      } instructions per GET`
    )
  }
  return perRequest
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

buildServer()
const floorFile = buildFloor()
const floorDb = await createDatabase(ADMIN_URL, "instr_floor")
const oursDb = await createDatabase(ADMIN_URL, "instr_acp")
const targets: Array<Target> = []
try {
  console.log(`Starting both servers under callgrind (about 100 s); work dir ${workDir}`)
  const [floor, ours] = await Promise.all([
    startUnderCallgrind("floor", floorFile, { DATABASE_URL: floorDb.url, DATABASE_POOL_SIZE: "10" }, {}),
    startUnderCallgrind(
      "ours",
      join(PROJECT_ROOT, "dist", "main.js"),
      {
        DATABASE_URL: oursDb.url,
        DATABASE_POOL_SIZE: "10",
        API_KEYS: API_KEY,
        DATA_DIR: join(workDir, "ours", "data"),
        CATALOG_FILE: join(PROJECT_ROOT, "catalog", "demo-catalog.json")
      },
      { authorization: `Bearer ${API_KEY}`, "api-version": API_VERSION }
    )
  ])
  targets.push(floor, ours)
  floor.paths = Array.from({ length: 50 }, (_, i) => `/read/${i}`)
  const ids: Array<string> = []
  for (let i = 0; i < 20; i++) {
    const response = await fetch(ours.baseUrl + "/checkout_sessions", {
      method: "POST",
      headers: { ...ours.headers, "content-type": "application/json" },
      body: JSON.stringify({ items: FLOW_ITEMS, buyer, fulfillment_address: address })
    })
    const body = (await response.json()) as { id: string }
    if (response.status !== 201) exitWith(`creating sessions: ${response.status} ${JSON.stringify(body)}`)
    ids.push(body.id)
  }
  ours.paths = ids.map((id) => `/checkout_sessions/${id}`)
  console.log(`Warm-up: ${warmupRounds} × ${requests} GETs each, then ${rounds} measured rounds of ${requests}`)
  const [floorCounts, oursCounts] = await Promise.all([measure(floor), measure(ours)])
  const floorMedian = median(floorCounts)
  const oursMedian = median(oursCounts)
  const range = (values: ReadonlyArray<number>) =>
    `${Math.round(Math.min(...values)).toLocaleString("en")}–${Math.round(Math.max(...values)).toLocaleString("en")}`
  console.log("\nInstructions per GET on the server's main thread (median of the rounds, and their range):")
  console.log(`  floor read   ${Math.round(floorMedian).toLocaleString("en").padStart(10)}   (${range(floorCounts)})`)
  console.log(`  GET session  ${Math.round(oursMedian).toLocaleString("en").padStart(10)}   (${range(oursCounts)})`)
  console.log(
    `  floor / ours ${
      (100 * floorMedian / oursMedian).toFixed(0).padStart(9)
    } %   (the GET goal is ≥ 100 % of the floor's rate)`
  )
} finally {
  for (const target of targets) target.child.kill("SIGKILL")
  await Promise.all([floorDb.drop(), oursDb.drop()])
  if (!args.keep) rmSync(workDir, { recursive: true, force: true })
}
