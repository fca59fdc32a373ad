/**
 * The embedded database's own process: PGlite (PostgreSQL compiled to WebAssembly) opened on a
 * data directory and served on 127.0.0.1 by `PGLiteSocketServer`. Started and supervised by
 * `./embedded-database.ts`; never run by hand.
 *
 * Running PGlite beside the server rather than inside it lets the two use two cores (PGlite runs
 * each statement synchronously, blocking the event loop it shares), keeps PGlite's WebAssembly
 * memory out of the server's, and a crash of PGlite out of the server.
 *
 * `process.argv[2]` is an `EmbeddedServerArguments` as JSON:
 * - `initialize`: runs PGlite's initdb into `dataDir` and exits 0. The initdb grows the WebAssembly
 *   memory far beyond what serving needs, and a process keeps it until it exits: it gets its own
 *   short process.
 * - `serve`: opens `dataDir` (in memory when absent; `loadDataDirFile` seeds a new one from a
 *   `dumpDataDir` archive), listens on `port` (0: any free one), sends `{ type: "listening", port }`
 *   to the parent over IPC, and serves until the parent sends `{ type: "stop" }` or goes away
 *   (its IPC channel closes, also when it was killed): then it closes PGlite, which flushes it,
 *   and exits 0.
 *
 * Any failure is one line on stderr and exit code 1. SIGINT and SIGTERM are ignored: Ctrl-C and a
 * service manager signal the whole process group, and the database must outlive the server's
 * graceful shutdown (in-flight requests still use it); the server stops it last.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { readFileSync } from "node:fs"

export type EmbeddedServerArguments =
  | { readonly mode: "initialize"; readonly dataDir: string }
  | {
    readonly mode: "serve"
    readonly dataDir?: string
    readonly loadDataDirFile?: string
    readonly port: number
    /** PostgreSQL settings added to PGlite's default start parameters. */
    readonly startParams: ReadonlyArray<string>
  }

/** Messages from this process to the server. */
export type EmbeddedServerMessage = { readonly type: "listening"; readonly port: number }

const oneLine = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/\s+/g, " ").trim() || "unknown error"
}

const fail = (error: unknown): never => {
  process.stderr.write(`${oneLine(error)}\n`)
  process.exit(1)
}

const initialize = async (dataDir: string) => {
  const db = await PGlite.create(dataDir)
  await db.close()
  process.exit(0)
}

/** What the server's "stop" or its going away does: before serving, exit at once. */
let stop: () => void = () => process.exit(0)

const serve = async (args: Extract<EmbeddedServerArguments, { mode: "serve" }>) => {
  const options = {
    startParams: [...PGlite.defaultStartParams, ...args.startParams],
    ...(args.loadDataDirFile !== undefined
      ? { loadDataDir: new Blob([readFileSync(args.loadDataDirFile)], { type: "application/x-gzip" }) }
      : {})
  }
  const db = args.dataDir === undefined ? await PGlite.create(options) : await PGlite.create(args.dataDir, options)
  // One connection: PGlite is a single backend session (see `./database.ts`).
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: args.port, maxConnections: 1 })
  await server.start()
  let stopping = false
  stop = () => {
    if (stopping) return
    stopping = true
    server.stop()
      .then(() => db.close())
      .then(() => process.exit(0), fail)
  }
  const port = Number(server.getServerConn().split(":").at(-1))
  const listening: EmbeddedServerMessage = { type: "listening", port }
  process.send?.(listening)
}

const parseArguments = (): EmbeddedServerArguments => {
  if (process.send === undefined) return fail("the embedded database process is started by the server, over IPC")
  try {
    return JSON.parse(process.argv[2] ?? "") as EmbeddedServerArguments
  } catch (error) {
    return fail(error)
  }
}

process.on("uncaughtException", fail)
process.on("unhandledRejection", fail)
process.on("SIGINT", () => {})
process.on("SIGTERM", () => {})
process.on("message", (message: { readonly type?: unknown } | null) => {
  if (message?.type === "stop") stop()
})
process.on("disconnect", () => stop())

const args = parseArguments()
;(args.mode === "initialize" ? initialize(args.dataDir) : serve(args)).catch(fail)
