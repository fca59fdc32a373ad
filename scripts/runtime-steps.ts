/**
 * Effect runtime steps per request: how many instructions the fibers of a request evaluate, on
 * our server (GET session, create session, complete) or on the stack floor
 * (`scripts/bench-floor.ts`, its read), each on a fresh PostgreSQL database. The steps are
 * counted, not timed, so the figure repeats exactly whatever else the machine does: a hot-path
 * change shows as fewer steps, where the request rates of the bench would drown it in noise.
 * What each step is, is printed too.
 *
 * `complete` pays sessions made ready beforehand (create, select an option, tokenize) and counts
 * the delivery of each completion's order event to the server's own receiver too (sender and
 * receiver); `STEPS_ROLES=checkout,delegate,webhook_receiver` (the server's `ROLES`) leaves the
 * sender out.
 *
 * `create-keyed` is create with a fresh `Idempotency-Key` on each request (the idempotency
 * middleware's claim and stored answer included). `healthz` and `floor-healthz` are `GET /healthz`
 * on ours and on the floor: a route without a statement, the HTTP stack's own steps per request;
 * `stack-fiber`, `stack-platform` and `stack-httpapi` the same on each layer of that stack
 * (`scripts/bench-stack.ts`).
 *
 * Usage: `npm run bench:runtime-steps [-- --scenarios stack-fiber,stack-platform,stack-httpapi,healthz,floor-healthz,get,create,create-keyed,floor,complete]` (the default:
 * get, create, floor; 200 requests each after 300 of warm-up, 4 at a time; the 30 most frequent
 * kinds of step).
 * Env: BENCH_DATABASE_URL (as the bench), STEPS_ROLES.
 */
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { address, buyer, tokenizeBody } from "./lib/acp-client.ts"
import { dialectOf } from "./lib/agent-dialects.ts"
import {
  ADMIN_URL,
  API_KEY,
  benchCatalogFile,
  runMain,
  scenarios,
  serverEnv,
  start,
  stop,
  workDir
} from "./lib/bench-setup.ts"
import { FLOW_ITEMS } from "./lib/flow.ts"
import { createDatabase, freePort, PROJECT_ROOT, sleep } from "./lib/processes.ts"

const REQUESTS = 200
const TOP = 30
const chosen = process.argv.some((arg) => arg.startsWith("--scenarios"))
  ? [
    "stack-fiber",
    "stack-platform",
    "stack-httpapi",
    "healthz",
    "floor-healthz",
    "get",
    "create",
    "create-keyed",
    "floor",
    "complete"
  ].filter((name) => scenarios.has(name))
  : ["get", "create", "floor"]
const headers = { authorization: `Bearer ${API_KEY}`, "api-version": "2025-09-29", "content-type": "application/json" }
const createBody = { items: FLOW_ITEMS, buyer, fulfillment_address: address }
const dialect = dialectOf("2025-09-29")

const countSteps = async (scenario: string) => {
  const stackLayer = scenario.startsWith("stack-") ? scenario.slice("stack-".length) : undefined
  // The stack's layers answer a fixed body and open no database.
  const database = stackLayer === undefined ? await createDatabase(ADMIN_URL, "bench_steps") : undefined
  try {
    const port = await freePort()
    const out = join(workDir, `steps-${scenario}.json`)
    const entry = stackLayer !== undefined
      ? "../bench-stack.ts"
      : scenario.startsWith("floor")
      ? "../bench-floor.ts"
      : "../../src/main.ts"
    const server = await start(
      `steps-${scenario}`,
      ["--import", "tsx", join(PROJECT_ROOT, "scripts/lib/runtime-step-counter.ts")],
      {
        PATH: process.env["PATH"] ?? "",
        ...serverEnv(benchCatalogFile(), {
          PORT: String(port),
          ...(database !== undefined ? { DATABASE_URL: database.url } : {}),
          DATA_DIR: workDir,
          STEPS_ENTRY: new URL(entry, new URL("./lib/", import.meta.url)).href,
          STEPS_OUT: out,
          ...(stackLayer !== undefined ? { STACK_LAYER: stackLayer } : {}),
          ...(process.env["STEPS_ROLES"] !== undefined ? { ROLES: process.env["STEPS_ROLES"] } : {})
        })
      },
      port,
      false
    )
    const post = (path: string, body: unknown) =>
      fetch(`${server.baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) }).then((r) =>
        r.json() as Promise<any>
      )
    /** A session ready for payment and a token for its total (the flow's steps before complete). */
    const readyToPay = async () => {
      const session = dialect.view(await post("/checkout_sessions", createBody))
      const ready = dialect.view(
        await post(
          `/checkout_sessions/${session.id}`,
          dialect.selectOptionBody(session, session.options.at(-1)?.id ?? "")
        )
      )
      const total = ready.totals.find((t) => t.type === "total")?.amount ?? 0
      const token = await post("/agentic_commerce/delegate_payment", tokenizeBody(session.id, total, "runtime-steps"))
      if (token.id === undefined) throw new Error(`tokenize: ${JSON.stringify(token).slice(0, 300)}`)
      return { id: session.id, token: token.id as string }
    }
    const complete = async ({ id, token }: { id: string; token: string }) => {
      const completed = await post(`/checkout_sessions/${id}/complete`, dialect.completeBody(token))
      if (completed.status !== "completed") throw new Error(`complete: ${JSON.stringify(completed).slice(0, 300)}`)
    }

    /** Warms up, then counts `REQUESTS` requests made by `one`, 4 at a time. */
    const count = async (warmUp: () => Promise<unknown>, one: (i: number) => Promise<unknown>) => {
      await warmUp()
      process.kill(server.pid, "SIGUSR1")
      await sleep(200)
      await Promise.all(Array.from({ length: 4 }, async (_, lane) => {
        for (let i = lane; i < REQUESTS; i += 4) await one(i)
      }))
    }
    if (scenario === "complete") {
      const prepared: Array<{ id: string; token: string }> = []
      await count(async () => {
        for (let i = 0; i < 100; i++) await complete(await readyToPay())
        for (let i = 0; i < REQUESTS; i++) prepared.push(await readyToPay())
        await sleep(1500)
      }, (i) => complete(prepared[i]!))
      // The order events the completions sent, delivered to the server's own receiver, count too.
      await sleep(2000)
    } else {
      const created = scenario === "get" ? dialect.view(await post("/checkout_sessions", createBody)) : undefined
      const one = () =>
        (scenario === "floor"
          ? fetch(`${server.baseUrl}/read/1`)
          : scenario === "healthz" || scenario === "floor-healthz" || stackLayer !== undefined
          ? fetch(`${server.baseUrl}/healthz`)
          : scenario === "get"
          ? fetch(`${server.baseUrl}/checkout_sessions/${created!.id}`, { headers })
          : fetch(`${server.baseUrl}/checkout_sessions`, {
            method: "POST",
            headers: scenario === "create-keyed" ? { ...headers, "idempotency-key": randomUUID() } : headers,
            body: JSON.stringify(createBody)
          }))
          .then((r) => r.text())
      await count(async () => {
        for (let i = 0; i < 300; i++) await one()
      }, one)
    }
    await sleep(200)
    process.kill(server.pid, "SIGUSR2")
    await sleep(500)
    const counts = (JSON.parse(readFileSync(out, "utf8")) as Array<[string, number]>).sort((a, b) => b[1] - a[1])
    const total = counts.reduce((sum, [, n]) => sum + n, 0)
    console.log(`\n${scenario}: ${(total / REQUESTS).toFixed(1)} runtime steps per request (${REQUESTS} requests)`)
    for (const [step, n] of counts.slice(0, TOP)) console.log(`${(n / REQUESTS).toFixed(1).padStart(7)}  ${step}`)
    await stop(server)
  } finally {
    await database?.drop()
  }
}

runMain(async () => {
  for (const scenario of chosen) await countSteps(scenario)
})
