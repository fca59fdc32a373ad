/**
 * The embedded database (PGlite) in a process of its own (`./embedded-database-server.ts`), supervised
 * by the server: a new data directory is initialized in a staging directory renamed into place; a
 * process that exits unexpectedly is restarted on the same port (requests get 503 meanwhile); on
 * shutdown it is asked to stop, and killed after `STOP_TIMEOUT` (`docs/operations.md#the-embedded-store`).
 */
import { Data, Duration, Effect, Option, Ref, Schedule, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import {
  existsSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { EmbeddedServerArguments, EmbeddedServerMessage } from "./embedded-database-server.ts"

export class EmbeddedStartError extends Data.TaggedError("EmbeddedStartError")<{
  readonly message: string
  readonly cause: unknown
}> {}

/** Added to PGlite's start parameters: 8 MB of shared buffers instead of 128 (`docs/operations.md`). */
export const PGLITE_SETTINGS: ReadonlyArray<string> = ["-c", "shared_buffers=8MB"]

/** Node flags and environment that bound the database process's memory (`docs/operations.md#the-embedded-store`). */
const DATABASE_PROCESS_FLAGS: ReadonlyArray<string> = [
  "--liftoff-only",
  "--max-semi-space-size=1",
  "--max-old-space-size=256"
]
const DATABASE_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" }

export const STOP_TIMEOUT = Duration.seconds(15)

const RESTART_SCHEDULE = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay((delay) => Duration.min(delay, Duration.seconds(5)))
)

const serverCommand = (args: EmbeddedServerArguments): { readonly file: string; readonly argv: Array<string> } => {
  const source = import.meta.url.endsWith(".ts")
  const script = fileURLToPath(new URL(`./embedded-database-server.${source ? "ts" : "js"}`, import.meta.url))
  const tsx = () => pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
  return {
    file: process.execPath,
    argv: [...DATABASE_PROCESS_FLAGS, ...(source ? ["--import", tsx()] : []), script, JSON.stringify(args)]
  }
}

const lastLine = (text: string): string => text.trim().split("\n").at(-1)?.trim() ?? ""

interface Started {
  readonly child: ChildProcess
  readonly port: number
  readonly stderr: () => string
}

const describeExit = (code: number | null, signal: NodeJS.Signals | null): string =>
  signal !== null ? `was stopped by ${signal}` : `exited with ${code}`

// Interrupted, the process is killed with SIGKILL, as it ignores SIGTERM.
const run = (args: EmbeddedServerArguments): Effect.Effect<Started, EmbeddedStartError> =>
  Effect.async<Started, EmbeddedStartError>((resume) => {
    const { argv, file } = serverCommand(args)
    const what = args.mode === "initialize" ? "the initialization of the data directory" : "the database process"
    let child: ChildProcess
    try {
      child = spawn(file, argv, {
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        env: { ...process.env, ...DATABASE_PROCESS_ENV }
      })
    } catch (cause) {
      resume(Effect.fail(new EmbeddedStartError({ message: `cannot start ${what}`, cause })))
      return
    }
    let stderr = ""
    // Always drained, or a chatty process would block on a full pipe.
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2_000)
    })
    let done = false
    const settle = (effect: Effect.Effect<Started, EmbeddedStartError>) => {
      if (done) return
      done = true
      resume(effect)
    }
    const started = (port: number): Started => ({ child, port, stderr: () => stderr })
    child.on(
      "error",
      (cause) => settle(Effect.fail(new EmbeddedStartError({ message: `cannot start ${what}`, cause })))
    )
    child.on("message", (message: EmbeddedServerMessage) => {
      if (message.type === "listening") settle(Effect.succeed(started(message.port)))
    })
    child.on("exit", (code, signal) => {
      if (args.mode === "initialize" && code === 0) return settle(Effect.succeed(started(0)))
      const detail = lastLine(stderr)
      const name = args.mode === "initialize" ? "initializing the data directory" : "the database process"
      settle(Effect.fail(
        new EmbeddedStartError({
          message: `${name} ${describeExit(code, signal)}${detail === "" ? "" : `: ${detail}`}`,
          cause: undefined
        })
      ))
    })
    return Effect.async<void>((stopped) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return stopped(Effect.void)
      child.once("exit", () => stopped(Effect.void))
      child.kill("SIGKILL")
    })
  })

const awaitExit = (child: ChildProcess) =>
  Effect.async<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>((resume) => {
    const exited = () => resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    if (child.exitCode !== null || child.signalCode !== null) return exited()
    child.once("exit", exited)
    return Effect.sync(() => child.off("exit", exited))
  })

const stopProcess = Effect.fnUntraced(function*(child: ChildProcess): Effect.fn.Return<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  if (child.connected) child.send({ type: "stop" })
  else child.kill("SIGKILL")
  const exited = yield* awaitExit(child).pipe(Effect.timeout(STOP_TIMEOUT), Effect.option)
  if (Option.isNone(exited)) {
    yield* Effect.logWarning("The embedded database did not stop in time; killing it")
    child.kill("SIGKILL")
    yield* awaitExit(child)
  }
})

const isNewDataDir = (dataDir: string): Effect.Effect<boolean, EmbeddedStartError> =>
  Effect.try({
    try: () => !existsSync(dataDir) || readdirSync(dataDir).length === 0,
    catch: (cause) => new EmbeddedStartError({ message: "cannot read the data directory", cause })
  })

export const initializeDataDir = (dataDir: string): Effect.Effect<void, EmbeddedStartError> => {
  const staging = `${dataDir}.initializing`
  const removeStaging = Effect.sync(() => {
    try {
      rmSync(staging, { recursive: true, force: true })
    } catch {
      // Nothing to remove, or nothing we can: the failure being reported says why.
    }
  })
  // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
  return Effect.gen(function*() {
    yield* removeStaging // left over by a first start that was killed mid-way
    yield* run({ mode: "initialize", dataDir: staging })
    yield* Effect.try({
      try: () => {
        if (existsSync(dataDir)) rmdirSync(dataDir) // empty (checked by the caller), else this fails
        renameSync(staging, dataDir)
      },
      catch: (cause) =>
        new EmbeddedStartError({ message: "cannot move the initialized data directory into place", cause })
    })
  }).pipe(Effect.onExit((exit) => exit._tag === "Success" ? Effect.void : removeStaging))
}

// Initializes a new data directory unless `loadDataDir` seeds it; the archive to open it with, if any.
export const prepareDataDir = Effect.fnUntraced(function*(
  dataDir: string | undefined,
  loadDataDir: Blob | undefined
): Effect.fn.Return<Blob | undefined, EmbeddedStartError> {
  const isNew = dataDir === undefined || (yield* isNewDataDir(dataDir))
  if (!isNew) return undefined
  if (dataDir !== undefined && loadDataDir === undefined) yield* initializeDataDir(dataDir)
  return loadDataDir
})

const processExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

// Creates `file` whole or not at all (EEXIST when it exists), so that no process reads a half-written lock.
const createComplete = (file: string, content: string) => {
  const temporary = join(dirname(file), `.lock-${randomBytes(6).toString("hex")}`)
  writeFileSync(temporary, content)
  try {
    linkSync(temporary, file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error
    writeFileSync(file, content, { flag: "wx" })
  } finally {
    rmSync(temporary, { force: true })
  }
}

const locksHeldHere = new Set<string>()

/**
 * Holds `<dataDir>.lock` (this process's id) until the scope closes: two PGlite processes on one
 * directory corrupt it. A lock whose process is gone is taken over (two servers doing so at the same
 * instant could both succeed).
 */
export const lockDataDir = (dataDir: string): Effect.Effect<void, EmbeddedStartError, Scope.Scope> => {
  const lockFile = `${resolve(dataDir)}.lock`
  const own = String(process.pid)
  const take = (): Effect.Effect<void, EmbeddedStartError> =>
    Effect.suspend(() => {
      // A lock naming this pid was left by an earlier process (a container's server is always pid 1).
      if (locksHeldHere.has(lockFile)) {
        return Effect.fail(
          new EmbeddedStartError({ message: "the data directory is already open in this process", cause: undefined })
        )
      }
      try {
        createComplete(lockFile, own)
        return Effect.void
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
          return Effect.fail(new EmbeddedStartError({ message: "cannot create the lock file", cause: error }))
        }
      }
      let holder: number
      try {
        holder = Number.parseInt(readFileSync(lockFile, "utf8"), 10)
      } catch {
        return take() // removed meanwhile
      }
      if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && processExists(holder)) {
        return Effect.fail(
          new EmbeddedStartError({
            message: `the data directory is in use by process ${holder} (another server on the same DATA_DIR?); ` +
              `if that process is not a server, remove ${lockFile}`,
            cause: undefined
          })
        )
      }
      try {
        rmSync(lockFile, { force: true }) // left by a process that is gone
      } catch (cause) {
        return Effect.fail(new EmbeddedStartError({ message: "cannot remove a stale lock file", cause }))
      }
      return take()
    })
  return Effect.acquireRelease(Effect.tap(take(), () => locksHeldHere.add(lockFile)), () =>
    Effect.sync(() => {
      locksHeldHere.delete(lockFile)
      try {
        if (readFileSync(lockFile, "utf8") === own) rmSync(lockFile, { force: true })
      } catch {
        // Already gone.
      }
    }))
}

export interface EmbeddedDatabaseProcess {
  /** The port on 127.0.0.1 it listens on; the same after a restart. */
  readonly port: number
  readonly pid: Effect.Effect<number | undefined>
}

export const startEmbeddedDatabaseProcess = Effect.fnUntraced(function*(options: {
  readonly dataDir?: string | undefined
  readonly loadDataDir?: Blob | undefined
  readonly startParams?: ReadonlyArray<string>
}): Effect.fn.Return<EmbeddedDatabaseProcess, EmbeddedStartError, Scope.Scope> {
  const { dataDir, startParams = PGLITE_SETTINGS } = options
  const loadDataDir = yield* prepareDataDir(dataDir, options.loadDataDir)

  const serve = (port: number, loadDataDirFile?: string) =>
    run({
      mode: "serve",
      port,
      startParams,
      ...(dataDir !== undefined ? { dataDir } : {}),
      ...(loadDataDirFile !== undefined ? { loadDataDirFile } : {})
    })
  // The archive seeds the first start only: a restart opens what that start made.
  const first = yield* loadDataDir === undefined
    ? serve(0)
    : Effect.scoped(Effect.flatMap(writeTemporary(loadDataDir), (file) => serve(0, file)))
  const current = yield* Ref.make(first)
  yield* Effect.addFinalizer(() => Effect.flatMap(Ref.get(current), (started) => stopProcess(started.child)))

  const restart = serve(first.port).pipe(
    Effect.tapError((error) => Effect.logWarning(`The embedded database could not be restarted: ${error.message}`)),
    Effect.retry(RESTART_SCHEDULE),
    Effect.orDie // unreachable: the schedule never ends
  )
  const supervise: Effect.Effect<void> = Effect.gen(function*() {
    const started = yield* Ref.get(current)
    const { code, signal } = yield* awaitExit(started.child)
    const detail = lastLine(started.stderr())
    const what = `The embedded database process ${describeExit(code, signal)}${detail === "" ? "" : ` (${detail})`}`
    if (dataDir === undefined) return yield* Effect.logError(`${what}; it was in memory and is not restarted`)
    yield* Effect.logError(`${what}; restarting it`)
    yield* Effect.sleep("100 millis")
    const again = yield* restart
    yield* Ref.set(current, again)
    yield* Effect.logInfo("The embedded database is running again")
    return yield* supervise
  })
  yield* Effect.forkScoped(supervise)
  return { port: first.port, pid: Effect.map(Ref.get(current), (started) => started.child.pid) }
})

const writeTemporary = (archive: Blob): Effect.Effect<string, EmbeddedStartError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const dir = mkdtempSync(join(tmpdir(), "acp-pglite-load-"))
        const file = join(dir, "data.tar.gz")
        writeFileSync(file, Buffer.from(await archive.arrayBuffer()))
        return file
      },
      catch: (cause) => new EmbeddedStartError({ message: "cannot write the data directory archive", cause })
    }),
    (file) => Effect.sync(() => rmSync(join(file, ".."), { recursive: true, force: true }))
  )
