/**
 * PostgreSQL's side of a create, without Node: `checkout_create_session` called by pgbench on a
 * fresh, migrated database, against the stack floor's write transaction (`SELECT … FOR UPDATE`,
 * `UPDATE`, `INSERT` on 500 rows in rotation) on the same server, and optionally against the
 * function's body at an earlier commit (`--against <ref>`, defined beside it under another name).
 *
 * Every create reserves the bench's two products (`FLOW_ITEMS`), as the bench's create scenario
 * does: two stock rows every create writes, the case of a product in demand. The session document
 * is one our service stored for that request (`scripts/lib/session-document.json`).
 *
 * Prints per variant and number of clients: transactions per second and PostgreSQL's CPU per
 * transaction (every process of the server, from /proc, the server's background writers included),
 * the median of `--rounds` runs and their range; the variants run alternately within each round,
 * so a drift of the machine touches them alike. Needs pgbench and a local PostgreSQL
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 *
 * Usage: `npm run bench:create-sql [-- --clients 1,8,32 --duration 8 --rounds 3 --against <ref>]`.
 */
import { Effect, Layer, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { makeDatabaseLayer } from "../src/db/database.ts"
import { medianWithRange } from "./lib/figures.ts"
import { FLOW_ITEMS } from "./lib/flow.ts"
import {
  createDatabase,
  exitWith,
  postgresReachable,
  postgresTicks,
  PROJECT_ROOT,
  requireCommand,
  sqlClient,
  TICKS_PER_SECOND
} from "./lib/processes.ts"

const { values: args } = parseArgs({
  options: {
    clients: { type: "string", default: "1,8,32" },
    duration: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
    against: { type: "string" }
  }
})
const ADMIN_URL = process.env["BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const clientCounts = args.clients.split(",").map(Number).filter((n) => n > 0)
const rounds = Math.max(1, Number(args.rounds))
const workDir = mkdtempSync(join(tmpdir(), "acp-create-sql-"))

requireCommand("pgbench", "pgbench is not installed (Debian: postgresql-client): nothing measured.")
if (!(await postgresReachable(ADMIN_URL))) exitWith(`PostgreSQL at ${ADMIN_URL} does not answer: nothing measured.`)

/**
 * A session document as the arguments of a create: its wire form and its internal fields. Spaced
 * after every colon and on one line: pgbench reads `:name` in a script as a variable.
 */
const documentArguments = (document: string): string => {
  const literal = (value: unknown) => `'${JSON.stringify(value, null, 1).replaceAll("\n", " ").replaceAll("'", "''")}'`
  const { items, ...wire } = JSON.parse(document)
  return `${literal(wire)}::json, ${literal({ items })}::json`
}

/**
 * The `checkout_create_session` definition at `ref`, renamed to `name`: the ref's function modules
 * extracted to the work directory and imported, so that a body built from constants is built as
 * it was at that commit.
 */
const definitionAt = async (ref: string, name: string): Promise<string> => {
  const archive = join(workDir, "functions.tar")
  execFileSync("git", ["archive", "--output", archive, ref, "src/db/functions"], { cwd: PROJECT_ROOT })
  execFileSync("tar", ["-x", "-f", archive, "-C", workDir])
  const module = await import(pathToFileURL(join(workDir, "src/db/functions/checkout-create-session.ts")).href)
  const definition: unknown = module.checkoutCreateSession?.definition
  if (typeof definition !== "string") return exitWith(`no checkout_create_session definition at ${ref}`)
  return definition.replace(/FUNCTION checkout_create_session\(/, `FUNCTION ${name}(`)
}

const database = await createDatabase(ADMIN_URL, "create_sql")
const admin = sqlClient(database.url)
try {
  // Migrations and functions as the service applies them.
  await Effect.runPromise(
    Effect.scoped(
      Layer.build(
        makeDatabaseLayer({ kind: "postgres", url: Redacted.make(database.url), poolSize: 1, source: "bench" })
      )
    )
  )
  const products = [...FLOW_ITEMS].map((item) => item.id)
  await admin.query(
    `INSERT INTO stock (product_id, on_hand) SELECT unnest(ARRAY[${
      products.map((id) => `'${id}'`).join(",")
    }]), 1000000000 ON CONFLICT (product_id) DO UPDATE SET on_hand = EXCLUDED.on_hand`
  )
  const document = readFileSync(join(PROJECT_ROOT, "scripts", "lib", "session-document.json"), "utf8")
  await admin.query(
    `CREATE TABLE floor_items (id integer PRIMARY KEY, counter bigint NOT NULL, data jsonb NOT NULL);
     CREATE TABLE floor_events (id bigserial PRIMARY KEY, item_id integer NOT NULL, quantity integer NOT NULL, created_at timestamptz NOT NULL);
     INSERT INTO floor_items SELECT g, 0, '${document.replaceAll("'", "''")}'::jsonb FROM generate_series(0, 499) g`
  )
  // Since migration 0020 the session's wire form and its internal fields are two `json` texts.
  const sessionArguments = documentArguments(document)
  const variants: Array<{ readonly name: string; readonly fn: string }> = [
    { name: "create (this checkout)", fn: "checkout_create_session" }
  ]
  if (args.against !== undefined) {
    const name = "checkout_create_session_before"
    const definition = await definitionAt(args.against, name)
    // Its body writes the columns of its own release: one before migration 0020 cannot run here.
    if (!/p_internal json/.test(definition)) {
      exitWith(
        `${args.against} predates migration 0020 (a session's document in two json columns): compare with a later ref`
      )
    }
    await admin.query(definition)
    variants.push({ name: `create (${args.against})`, fn: name })
  }
  const scripts = new Map<string, string>()
  const sorted = [...FLOW_ITEMS].sort((a, b) => a.id.localeCompare(b.id))
  for (const variant of variants) {
    const file = join(workDir, `${variant.fn}.sql`)
    writeFileSync(
      file,
      `\\set n random(1, 1000000000000)
SELECT ${variant.fn}('cs_' || :n, 'ready_for_payment', ${sessionArguments},
  now() + interval '6 hours', now(), now(), '{${sorted.map((item) => item.id).join(",")}}'::text[],
  '{${sorted.map((item) => item.quantity).join(",")}}'::int[], now() + interval '6 hours', now());
`.replaceAll("\n  ", " ")
    )
    scripts.set(variant.name, file)
  }
  const floorFile = join(workDir, "floor.sql")
  writeFileSync(
    floorFile,
    `\\set id random(0, 499)
BEGIN;
SELECT counter FROM floor_items WHERE id = :id FOR UPDATE;
UPDATE floor_items SET counter = counter + 1 WHERE id = :id;
INSERT INTO floor_events (item_id, quantity, created_at) VALUES (:id, 1, now());
COMMIT;
`
  )
  scripts.set("floor write", floorFile)

  const pgbench = (file: string, clients: number) => {
    const url = new URL(database.url)
    const before = postgresTicks(true)
    const output = execFileSync("pgbench", [
      "-n",
      "-M",
      "prepared",
      "-h",
      url.hostname,
      "-p",
      url.port || "5432",
      "-U",
      decodeURIComponent(url.username) || "postgres",
      "-c",
      String(clients),
      "-j",
      "1",
      "-T",
      args.duration,
      "-f",
      file,
      database.name
    ], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    const cpuSeconds = (postgresTicks(true) - before) / TICKS_PER_SECOND
    const transactions = Number(/actually processed: (\d+)/.exec(output)?.[1] ?? NaN)
    const tps = Number(/^tps = ([\d.]+)/m.exec(output)?.[1] ?? NaN)
    return { tps, cpuPerTransaction: cpuSeconds / transactions }
  }

  console.log(`pgbench, ${args.duration} s per run, ${rounds} rounds, variants alternating; database ${database.name}`)
  for (const clients of clientCounts) {
    const results = new Map<string, Array<{ tps: number; cpuPerTransaction: number }>>()
    for (let round = 0; round < rounds; round++) {
      const order = [...scripts.entries()]
      if (round % 2 === 1) order.reverse()
      for (const [name, file] of order) {
        results.set(name, [...(results.get(name) ?? []), pgbench(file, clients)])
      }
    }
    console.log(`\n${clients} client${clients === 1 ? "" : "s"}:`)
    for (const [name, runs] of results) {
      console.log(
        `  ${name.padEnd(34)} ${medianWithRange(runs.map((r) => r.tps), 0).padStart(22)} tx/s   PostgreSQL CPU ${
          medianWithRange(runs.map((r) => r.cpuPerTransaction * 1000), 3)
        } ms per tx`
      )
    }
  }
} finally {
  await admin.close()
  await database.drop()
  rmSync(workDir, { recursive: true, force: true })
}
