/**
 * CPU of this process per statement, run as the stores run it (`src/db/statement-runner.ts`: on
 * the pool in one step) against `@effect/sql`'s own path (a span and a scope per statement), on
 * the service's client (`pgClientLayer`, named prepared statements) over PostgreSQL: what the
 * runner saves on each statement, without HTTP or the rest of a request.
 *
 * `--concurrency` fibers (default 1) each running one statement (`SELECT $1::int`) after another
 * on a pool of 10, `--rounds` rounds (default 5) of `--count` statements (default 10 000) per
 * path, the two paths alternating within each round after a warm-up of each; prints each round's
 * figures and the median with its range. A statement's CPU here includes the driver's work and
 * the event loop's wake-ups for the replies, which both paths pay alike (per statement at one
 * fiber, shared by several at more).
 *
 * Usage: `npm run bench:statement [-- --count 10000 --rounds 5 --concurrency 16]`.
 * Env: BENCH_DATABASE_URL (as the bench; default postgres://postgres@127.0.0.1:5432/test).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { pgClientLayer } from "../src/db/pg-client.ts"
import { statementRunner } from "../src/db/statement-runner.ts"
import { medianWithRange } from "./lib/figures.ts"

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "10000" },
    rounds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "1" }
  }
})
const count = Math.max(1, Number(values.count))
const rounds = Math.max(1, Number(values.rounds))
const concurrency = Math.max(1, Number(values.concurrency))
const url = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/**
 * Microseconds of this process's CPU per run of `statement`, run `times` times by `concurrency`
 * fibers, each one statement after another.
 */
const cpuPerStatement = (statement: (i: number) => Effect.Effect<unknown, unknown>, times: number) =>
  Effect.gen(function*() {
    const before = process.cpuUsage()
    const each = Math.ceil(times / concurrency)
    yield* Effect.forEach(
      Array.from({ length: concurrency }, (_, fiber) => fiber),
      (fiber) =>
        Effect.gen(function*() {
          for (let i = 0; i < each; i++) yield* statement(fiber * each + i)
        }),
      { concurrency, discard: true }
    )
    const used = process.cpuUsage(before)
    return (used.user + used.system) / (each * concurrency)
  })

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = statementRunner(sql)
  const paths = {
    "@effect/sql": (i: number) => sql<{ n: number }>`SELECT ${i}::int AS n`,
    "the stores' runner": (i: number) => run(sql<{ n: number }>`SELECT ${i}::int AS n`)
  }
  const names = Object.keys(paths) as Array<keyof typeof paths>
  for (const name of names) yield* cpuPerStatement(paths[name], 2_000)
  const figures: Record<string, Array<number>> = Object.fromEntries(names.map((name) => [name, []]))
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? names : [...names].reverse()
    const line: Array<string> = []
    for (const name of order) {
      const micros = yield* cpuPerStatement(paths[name], count)
      figures[name]!.push(micros)
      line.push(`${name} ${micros.toFixed(1)} µs`)
    }
    console.log(`round ${round}: ${line.join(", ")}`)
  }
  console.log(`\nCPU of this process per statement, ${count} statements per path and round, ${rounds} rounds:`)
  for (const name of names) {
    console.log(`  ${name.padEnd(20)} ${medianWithRange(figures[name]!)} µs`)
  }
})

Effect.runPromise(
  program.pipe(
    Effect.provide(
      pgClientLayer({ url, maxConnections: 10, preparedStatements: true, connectTimeoutMillis: 5_000 })
    ),
    // As the service runs (`src/main.ts`): the library's spans are no-ops.
    Effect.withTracerEnabled(false)
  )
).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
