/**
 * The embedded database's process, run by `./embedded-database.ts`: `initialize` runs initdb and exits
 * (initdb's memory goes with its process); `serve` serves PGlite on 127.0.0.1 until told to stop or its
 * IPC channel closes. SIGINT and SIGTERM are ignored: the server stops it last, after its requests.
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
    readonly startParams: ReadonlyArray<string>
  }

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

/** What "stop" or the server going away does; before serving, exit at once. */
let stop: () => void = () => process.exit(0)

const serve = async (args: Extract<EmbeddedServerArguments, { mode: "serve" }>) => {
  const options = {
    startParams: [...PGlite.defaultStartParams, ...args.startParams],
    ...(args.loadDataDirFile !== undefined
      ? { loadDataDir: new Blob([readFileSync(args.loadDataDirFile)], { type: "application/x-gzip" }) }
      : {})
  }
  const db = args.dataDir === undefined ? await PGlite.create(options) : await PGlite.create(args.dataDir, options)
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
