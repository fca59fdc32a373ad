/**
 * Our server against an earlier build of itself, by the full flow, in the same run (`npm run
 * bench:against -- --against <git ref>`, the mode `against`): how much a change moved the flow,
 * measured with one method, on one machine, minutes apart at most. `--api-version 2026-04-17`
 * runs the flow in that version's format, a fresh Idempotency-Key on every POST. `--scenario create`
 * measures session creates alone instead (the load generator's POST /checkout_sessions, requests/s
 * and CPU per create), paired the same way.
 *
 * The earlier commit is checked out in a worktree of this repository (under the bench's work
 * directory, removed at the end) and compiled as `npm run build` compiles ours, with this
 * checkout's packages; both servers run with this checkout's `npm start` Node flags (or, with
 * `--earlier-flags own`, the earlier build with those of its own package.json: a change of flags
 * measured against the build before it) on PostgreSQL, each on a fresh database, the server under
 * test alone on core 0 and the agents and PostgreSQL on the others. At each number of agents the
 * two are measured back to back, in alternating order, `--rounds` times, each half on a quiet
 * PostgreSQL and after a 2 s warm-up of its server at that number of agents; the table gives each
 * one's median checkouts/s with its spread, the median of the per-round ratios, the median request
 * p99, and the median CPU per checkout of the server process and of PostgreSQL (all its
 * processes), from /proc over the run and its delivery wait: where a change in the rate came from.
 *
 * A checkout's work ends when its order event is delivered: after each run the bench waits until
 * the server's outbox has no pending event, and the rate is the run's checkouts over its duration
 * and that wait. A server whose sender falls behind is not credited with the deliveries it left
 * for later, and no run inherits the previous one's backlog.
 *
 * Where the events go: by default each server posts them to its own receiver (no `WEBHOOK_URL`),
 * so the server under test pays both ends of every delivery. `--receiver apart` posts them, from
 * both builds alike, to one receiver process of this checkout (`ROLES=webhook_receiver`, a
 * database of its own) on the load cores, as a merchant's events go to the agent platform: the
 * server under test then pays the sending end only, and the receiver's CPU per checkout is
 * reported beside it.
 */
import { execFileSync } from "node:child_process"
import { symlinkSync } from "node:fs"
import { join } from "node:path"
import { ORDER_EVENTS_PATH } from "../../src/orders/http/webhook-sender.ts"
import { API_VERSION } from "./acp-client.ts"
import { LOAD_CORES, movePid } from "./affinity.ts"
import { createSessionLoad } from "./bench-loads.ts"
import { postgresVersion, writeTable } from "./bench-report.ts"
import {
  ADMIN_URL,
  API_KEY,
  apiVersion,
  args,
  benchCatalogFile,
  levels,
  log,
  measureRounds,
  onCleanup,
  perRunSeconds,
  pin,
  placeProcesses,
  serverEnv,
  start,
  startOurs,
  stop,
  tableLine,
  workDir
} from "./bench-setup.ts"
import { median, medianWithRange } from "./figures.ts"
import { percentile } from "./flow.ts"
import { runFlowProcess, runLoad } from "./load.ts"
import {
  buildServer,
  createDatabase,
  freePort,
  postgresReachable,
  postgresTicks,
  PROJECT_ROOT,
  serverNodeArgs,
  settlePostgres,
  sleep,
  sqlClient,
  TICKS_PER_SECOND,
  ticksOf
} from "./processes.ts"

/** The commit `ref` compiled in a worktree: the Node arguments that run it (flags and `dist/main.js`). */
const buildEarlier = (ref: string): ReadonlyArray<string> => {
  const tree = join(workDir, "earlier")
  const git = (...gitArgs: Array<string>) =>
    execFileSync("git", gitArgs, { cwd: PROJECT_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim()
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`)
  git("worktree", "add", "--detach", tree, commit)
  onCleanup(() => void git("worktree", "remove", "--force", tree))
  symlinkSync(join(PROJECT_ROOT, "node_modules"), join(tree, "node_modules"))
  execFileSync(process.execPath, [join(PROJECT_ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: tree,
    stdio: "inherit"
  })
  tableLine(`Earlier build: ${ref} (${commit.slice(0, 10)}).`)
  const earlierFlags = args["earlier-flags"]
  const flags = serverNodeArgs(earlierFlags === "own" ? tree : PROJECT_ROOT).slice(0, -1)
  tableLine(`Its Node flags (--earlier-flags ${earlierFlags}): \`${flags.join(" ")}\`.`)
  return [...flags, join(tree, "dist", "main.js")]
}

export const benchAgainst = async () => {
  if (args.against === undefined) throw new Error("--against <git ref> names the earlier build")
  if (!["ours", "own"].includes(args["earlier-flags"])) throw new Error("--earlier-flags is ours (the default) or own")
  if (!["self", "apart"].includes(args.receiver)) throw new Error("--receiver is self (the default) or apart")
  if (!["flow", "create"].includes(args.scenario)) throw new Error("--scenario is flow (the default) or create")
  const creates = args.scenario === "create"
  const apart = args.receiver === "apart"
  if (!(await postgresReachable(ADMIN_URL))) throw new Error(`PostgreSQL at ${ADMIN_URL} is not reachable`)
  const earlierArgs = buildEarlier(args.against)
  placeProcesses(true, "the agents")
  const catalogFile = benchCatalogFile()
  const oursDb = await createDatabase(ADMIN_URL, "bench_against_ours")
  const earlierDb = await createDatabase(ADMIN_URL, "bench_against_earlier")
  const receiverDb = apart ? await createDatabase(ADMIN_URL, "bench_against_receiver") : undefined
  const databases = { ours: sqlClient(oursDb.url), earlier: sqlClient(earlierDb.url) }
  try {
    const receiver = receiverDb === undefined ? undefined : await startReceiver(catalogFile, receiverDb.url)
    const sending: Record<string, string> = receiver === undefined
      ? {}
      : { WEBHOOK_URL: `${receiver.baseUrl}${ORDER_EVENTS_PATH}`, WEBHOOK_SECRET: RECEIVER_SECRET }
    const port = await freePort()
    const servers = {
      ours: await startOurs("ours", catalogFile, { DATABASE_URL: oursDb.url, ...sending }),
      earlier: await start(
        "earlier",
        earlierArgs,
        serverEnv(catalogFile, {
          PORT: String(port),
          DATA_DIR: join(workDir, "earlier-data"),
          DATABASE_URL: earlierDb.url,
          ...sending
        }),
        port
      )
    }
    type Which = keyof typeof servers
    /** Seconds until the outbox of `which` has no pending event. */
    const drain = async (which: Which) => {
      const started = performance.now()
      const pending = () =>
        databases[which].query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_outbox WHERE state = 'pending'")
          .then((rows) => rows[0]!.n)
      while (await pending() > 0) await sleep(20)
      return (performance.now() - started) / 1000
    }
    /** `agents` connections creating sessions for `seconds`: the same figures, per create. */
    const createOnly = async (which: Which, agents: number, seconds: number) => {
      const ticksBefore = { server: ticksOf(servers[which].pid), postgres: postgresTicks(true) }
      const result = await runLoad(
        {
          ...createSessionLoad,
          url: servers[which].baseUrl + createSessionLoad.path,
          connections: agents,
          seconds
        },
        pin,
        workDir
      )
      const msPerCreate = (ticks: number) => ticks / TICKS_PER_SECOND * 1000 / Math.max(1, result.requests)
      return {
        rate: result.requests / result.durationSeconds,
        p99: result.p99,
        errors: result.errors,
        serverMs: msPerCreate(ticksOf(servers[which].pid) - ticksBefore.server),
        postgresMs: msPerCreate(postgresTicks(true) - ticksBefore.postgres),
        receiverMs: 0
      }
    }
    const flow = async (which: Which, agents: number, seconds: number) => {
      if (creates) return createOnly(which, agents, seconds)
      const receiverTicks = () => (receiver === undefined ? 0 : ticksOf(receiver.pid))
      const ticksBefore = {
        server: ticksOf(servers[which].pid),
        postgres: postgresTicks(true),
        receiver: receiverTicks()
      }
      const stats = await runFlowProcess(
        {
          baseUrls: [servers[which].baseUrl],
          apiKey: API_KEY,
          agents,
          durationMillis: seconds * 1000,
          apiVersion
        },
        pin
      )
      const waited = await drain(which)
      const msPerCheckout = (ticks: number) => ticks / TICKS_PER_SECOND * 1000 / Math.max(1, stats.checkouts)
      return {
        rate: stats.checkouts / (stats.durationSeconds + waited),
        p99: percentile(stats.latencies, 99),
        errors: stats.errors,
        serverMs: msPerCheckout(ticksOf(servers[which].pid) - ticksBefore.server),
        postgresMs: msPerCheckout(postgresTicks(true) - ticksBefore.postgres),
        receiverMs: msPerCheckout(receiverTicks() - ticksBefore.receiver)
      }
    }
    type Run = Awaited<ReturnType<typeof flow>>
    for (const which of ["ours", "earlier"] as const) await flow(which, 16, 5)
    tableLine("")
    tableLine(
      `Ours against ${args.against}, ${creates ? "session creates alone" : "full flow"}${
        apiVersion !== API_VERSION ? ` in ${apiVersion}` : ""
      }, ${perRunSeconds} s per run, ${measureRounds} rounds, alternating order, ${
        apart ? "events posted to a receiver process apart" : "events posted to each server's own receiver"
      }:`
    )
    tableLine("")
    tableLine(
      (creates
        ? "| connections | ours (creates/s) | earlier | ours / earlier | request p99 ours / earlier " +
          "| server CPU per create ours / earlier | PostgreSQL CPU per create ours / earlier |"
        : "| agents | ours (checkouts/s, events delivered) | earlier | ours / earlier | request p99 ours / earlier " +
          "| server CPU per checkout ours / earlier | PostgreSQL CPU per checkout ours / earlier |") +
        (apart ? " receiver CPU per checkout ours / earlier |" : "")
    )
    tableLine(`|---:|---:|---:|---:|---:|---:|---:|${apart ? "---:|" : ""}`)
    const measuredRounds: Array<{ readonly agents: number; readonly rounds: ReadonlyArray<Record<Which, Run>> }> = []
    for (const agents of levels) {
      const results: Array<Record<Which, Run>> = []
      for (let round = 1; round <= measureRounds; round++) {
        const order: ReadonlyArray<Which> = round % 2 === 1 ? ["earlier", "ours"] : ["ours", "earlier"]
        const measured: Partial<Record<Which, Run>> = {}
        for (const which of order) {
          // As the bench's pairs: each half starts on a quiet PostgreSQL and after a warm-up of its
          // own server at its own concurrency, so neither inherits the other's WAL or caches.
          await settlePostgres(ADMIN_URL)
          await flow(which, agents, 2)
          const run = await flow(which, agents, perRunSeconds)
          if (run.errors > 0) log(`  ! ${which}, ${agents} agents: ${run.errors} errors`)
          measured[which] = run
        }
        results.push(measured as Record<Which, Run>)
      }
      measuredRounds.push({ agents, rounds: results })
      tableLine(
        `| ${agents} | ${medianWithRange(results.map((r) => r.ours.rate))} | ${
          medianWithRange(results.map((r) => r.earlier.rate))
        } | ${(median(results.map((r) => r.ours.rate / r.earlier.rate)) * 100).toFixed(0)} % | ${
          median(results.map((r) => r.ours.p99)).toFixed(0)
        } / ${median(results.map((r) => r.earlier.p99)).toFixed(0)} ms | ${cpu(results, "serverMs")} | ${
          cpu(results, "postgresMs")
        } |${apart ? ` ${cpu(results, "receiverMs")} |` : ""}`
      )
    }
    await stop(servers.ours)
    await stop(servers.earlier)
    if (receiver !== undefined) await stop(receiver)
    await writeTable(
      "Ours against an earlier build",
      {
        against: args.against,
        scenario: args.scenario,
        apiVersion,
        receiver: args.receiver,
        earlierFlags: args["earlier-flags"],
        measuredRounds
      },
      await postgresVersion()
    )
  } finally {
    await Promise.all([databases.ours.close(), databases.earlier.close()])
    await oursDb.drop()
    await earlierDb.drop()
    await receiverDb?.drop()
  }
}

/** The secret the servers sign their events with and the receiver apart checks them with. */
const RECEIVER_SECRET = "whsec_bench_against"

/** A server of this checkout that only receives order events, on the load cores. */
const startReceiver = async (catalogFile: string, databaseUrl: string) => {
  buildServer()
  const port = await freePort()
  const receiver = await start(
    "receiver",
    serverNodeArgs(),
    serverEnv(catalogFile, {
      PORT: String(port),
      DATA_DIR: join(workDir, "receiver-data"),
      DATABASE_URL: databaseUrl,
      ROLES: "webhook_receiver",
      WEBHOOK_RECEIVER_SECRETS: RECEIVER_SECRET
    }),
    port,
    false
  )
  if (pin) movePid(receiver.pid, LOAD_CORES)
  return receiver
}

/** The median CPU per checkout of ours and of the earlier build, in ms. */
const cpu = (
  results: ReadonlyArray<Record<"ours" | "earlier", Record<"serverMs" | "postgresMs" | "receiverMs", number>>>,
  which: "serverMs" | "postgresMs" | "receiverMs"
) =>
  `${median(results.map((r) => r.ours[which])).toFixed(2)} / ${
    median(results.map((r) => r.earlier[which])).toFixed(2)
  } ms`
