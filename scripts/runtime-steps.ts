/**
 * Effect runtime steps per request: how many instructions the fibers of a request evaluate, on
 * our server (GET session, create session) or on the stack floor (`scripts/bench-floor.ts`, its
 * read), each on a fresh PostgreSQL database. The steps are counted, not timed, so the figure
 * repeats exactly whatever else the machine does: a hot-path change shows as fewer steps, where
 * the request rates of the bench would drown it in noise. What each step is, is printed too.
 *
 * Usage: `npm run bench:runtime-steps [-- --scenarios get,create,floor]` (the default: all three;
 * 200 requests each after 300 of warm-up, 4 at a time; the 30 most frequent kinds of step).
 * Env: BENCH_DATABASE_URL (as the bench).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { address, buyer } from "./lib/acp-client.ts"
import { ADMIN_URL, API_KEY, benchCatalogFile, runMain, scenarios, start, stop, workDir } from "./lib/bench-setup.ts"
import { FLOW_ITEMS } from "./lib/flow.ts"
import { createDatabase, freePort, PROJECT_ROOT, sleep } from "./lib/processes.ts"

const REQUESTS = 200
const TOP = 30
const chosen = process.argv.some((arg) => arg.startsWith("--scenarios"))
  ? ["get", "create", "floor"].filter((name) => scenarios.has(name))
  : ["get", "create", "floor"]
const headers = { authorization: `Bearer ${API_KEY}`, "api-version": "2025-09-29", "content-type": "application/json" }
const createBody = JSON.stringify({ items: FLOW_ITEMS, buyer, fulfillment_address: address })

const countSteps = async (scenario: string) => {
  const database = await createDatabase(ADMIN_URL, "bench_steps")
  try {
    const port = await freePort()
    const out = join(workDir, `steps-${scenario}.json`)
    const entry = scenario === "floor" ? "../bench-floor.ts" : "../../src/main.ts"
    const server = await start(
      `steps-${scenario}`,
      ["--import", "tsx", join(PROJECT_ROOT, "scripts/lib/runtime-step-counter.ts")],
      {
        PATH: process.env["PATH"] ?? "",
        HOST: "127.0.0.1",
        PORT: String(port),
        API_KEYS: API_KEY,
        CATALOG_FILE: benchCatalogFile(),
        DATABASE_URL: database.url,
        DATA_DIR: workDir,
        STEPS_ENTRY: new URL(entry, new URL("./lib/", import.meta.url)).href,
        STEPS_OUT: out
      },
      port,
      false
    )
    const created = scenario === "get"
      ? ((await (await fetch(`${server.baseUrl}/checkout_sessions`, { method: "POST", headers, body: createBody }))
        .json()) as { id: string })
      : undefined
    const one = () =>
      (scenario === "floor"
        ? fetch(`${server.baseUrl}/read/1`)
        : scenario === "get"
        ? fetch(`${server.baseUrl}/checkout_sessions/${created!.id}`, { headers })
        : fetch(`${server.baseUrl}/checkout_sessions`, { method: "POST", headers, body: createBody })).then((r) =>
          r.text()
        )
    for (let i = 0; i < 300; i++) await one()
    process.kill(server.pid, "SIGUSR1")
    await sleep(200)
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let i = 0; i < REQUESTS / 4; i++) await one()
    }))
    await sleep(200)
    process.kill(server.pid, "SIGUSR2")
    await sleep(500)
    const counts = (JSON.parse(readFileSync(out, "utf8")) as Array<[string, number]>).sort((a, b) => b[1] - a[1])
    const total = counts.reduce((sum, [, n]) => sum + n, 0)
    console.log(`\n${scenario}: ${(total / REQUESTS).toFixed(1)} runtime steps per request (${REQUESTS} requests)`)
    for (const [step, n] of counts.slice(0, TOP)) console.log(`${(n / REQUESTS).toFixed(1).padStart(7)}  ${step}`)
    await stop(server)
  } finally {
    await database.drop()
  }
}

runMain(async () => {
  for (const scenario of chosen) await countSteps(scenario)
})
