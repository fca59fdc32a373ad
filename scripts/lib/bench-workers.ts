/**
 * One server process against two (`WORKERS=2`) on the same machine, by the full flow (the mode
 * `workers`): whether a second worker pays on this host.
 *
 * Both run on PostgreSQL, each on a fresh database, at the same time; at each number of agents
 * the two are measured back to back, in alternating order, `--rounds` times, each half on a quiet
 * PostgreSQL and after a 2 s warm-up of its server at that number of agents, and the table gives
 * the median checkouts/s of each with its spread and the median of the per-round ratios. Nothing
 * is pinned: two workers need every core, and the agents and PostgreSQL share them, as they would
 * on a host running the service and its database.
 */
import { postgresVersion, writeTable } from "./bench-report.ts"
import {
  ADMIN_URL,
  API_KEY,
  benchCatalogFile,
  levels,
  log,
  measureRounds,
  perRunSeconds,
  placeProcesses,
  startOurs,
  stop,
  tableLine
} from "./bench-setup.ts"
import { median, medianWithRange } from "./figures.ts"
import { runFlowProcess } from "./load.ts"
import { createDatabase, postgresReachable, settlePostgres } from "./processes.ts"

export const benchWorkers = async () => {
  if (!(await postgresReachable(ADMIN_URL))) throw new Error(`PostgreSQL at ${ADMIN_URL} is not reachable`)
  const catalogFile = benchCatalogFile()
  placeProcesses(false, "", "two workers need every core, and the agents and PostgreSQL share them")
  const one = await createDatabase(ADMIN_URL, "bench_workers_1")
  const two = await createDatabase(ADMIN_URL, "bench_workers_2")
  try {
    const servers = {
      1: await startOurs("workers-1", catalogFile, { DATABASE_URL: one.url, WORKERS: "1" }, undefined, false),
      2: await startOurs("workers-2", catalogFile, { DATABASE_URL: two.url, WORKERS: "2" }, undefined, false)
    }
    const flow = (workers: 1 | 2, agents: number, seconds: number) =>
      runFlowProcess(
        { baseUrls: [servers[workers].baseUrl], apiKey: API_KEY, agents, durationMillis: seconds * 1000 },
        false
      ).then((stats) => ({ rate: stats.checkouts / stats.durationSeconds, errors: stats.errors, stats }))
    await flow(1, 16, 5)
    await flow(2, 16, 5)
    tableLine(
      `1 against 2 workers, full flow, ${perRunSeconds} s per run, ${measureRounds} rounds, alternating order (checkouts/s):`
    )
    tableLine("")
    tableLine("| agents | 1 worker | 2 workers | 2 / 1 |")
    tableLine("|---:|---:|---:|---:|")
    const measuredRounds: Array<{ readonly agents: number; readonly rounds: ReadonlyArray<unknown> }> = []
    for (const agents of levels) {
      const results: Array<{ one: number; two: number }> = []
      for (let round = 1; round <= measureRounds; round++) {
        const order = round % 2 === 1 ? ([1, 2] as const) : ([2, 1] as const)
        const measured: Record<number, number> = {}
        for (const workers of order) {
          await settlePostgres(ADMIN_URL)
          await flow(workers, agents, 2)
          const run = await flow(workers, agents, perRunSeconds)
          if (run.errors > 0) log(`  ! ${workers} worker(s), ${agents} agents: ${run.errors} errors`)
          measured[workers] = run.rate
        }
        results.push({ one: measured[1]!, two: measured[2]! })
      }
      measuredRounds.push({ agents, rounds: results })
      tableLine(
        `| ${agents} | ${medianWithRange(results.map((r) => r.one))} | ${
          medianWithRange(results.map((r) => r.two))
        } | ${(median(results.map((r) => r.two / r.one)) * 100).toFixed(0)} % |`
      )
    }
    await stop(servers[1])
    await stop(servers[2])
    await writeTable("One server process against two", { measuredRounds }, await postgresVersion())
  } finally {
    await one.drop()
    await two.drop()
  }
}
