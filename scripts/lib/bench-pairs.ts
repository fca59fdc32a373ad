/** Paired runs: our server and the floor at once, GET and create measured back to back. */
import {
  authHeaders,
  createSessionLoad,
  floorReadLoad,
  floorWriteLoad,
  getSessionLoad,
  preCreateSessions
} from "./bench-loads.ts"
import { measure, warmUp } from "./bench-measure.ts"
import { pct } from "./bench-report.ts"
import {
  ADMIN_URL,
  levels,
  log,
  notes,
  pairRounds,
  pairs,
  scenarios,
  serverMicrosPerRequest,
  startFloor,
  startOurs,
  stop
} from "./bench-setup.ts"
import { createDatabase, type NodeProcess, settlePostgres } from "./processes.ts"

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

/**
 * The ratios of the targets measured in pairs. Request rates on a shared VM drift within minutes
 * by more than most changes, and the main runs measure the floor and our server minutes apart; here both run
 * at once (on databases of their own), each pair is measured back to back, the order alternates
 * from one round to the next (floor first, then ours first), and the targets take the median
 * ratio of the `--pairs` rounds.
 */
export const pairedRuns = async (catalogFile: string) => {
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
