/**
 * The embedded database (PGlite) in a process of its own, `./embedded-database-server.ts`,
 * started, supervised and stopped by the server:
 *
 * - A new data directory is first initialized by a short-lived process of the same script
 *   (PGlite's initdb leaves a large WebAssembly memory in the process that ran it), into a staging directory renamed
 *   into place once complete: an interrupted first start leaves nothing half-made behind.
 * - The database process listens on 127.0.0.1; the server's pool connects to it like to any
 *   PostgreSQL server.
 * - When it exits unexpectedly (a crash of PGlite, a kill), it is started again on the same port
 *   and data directory, after 0.1 s, then up to 5 s between attempts; meanwhile requests that need
 *   the database are answered 503 and /readyz says not ready, as with an unreachable PostgreSQL.
 *   An in-memory database (tests only) is not restarted: its data went with it.
 * - When the server stops (scope closed, after the pool), it asks the process to stop, which
 *   closes PGlite cleanly; after `STOP_TIMEOUT` it is killed. When the server itself dies without
 *   stopping it, the process notices its IPC channel closing and stops by itself.
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

/** The embedded database could not be started. */
export class EmbeddedStartError extends Data.TaggedError("EmbeddedStartError")<{
  readonly message: string
  readonly cause: unknown
}> {}

/**
 * PostgreSQL settings on top of PGlite's default start parameters (the database process adds
 * these to them, so the server never loads PGlite itself): 8 MB of shared buffers instead of
 * 128 MB. The buffers become resident as they are touched and stay so; the embedded store's working
 * set is small and the OS page cache holds the data files anyway (`docs/operations.md`).
 */
export const PGLITE_SETTINGS: ReadonlyArray<string> = ["-c", "shared_buffers=8MB"]

/**
 * How the database process's Node runs, for memory (`docs/operations.md`, "The embedded
 * store"): PostgreSQL compiled to WebAssembly is a large module, and V8's optimizing
 * tier compiles its hot functions on background threads whose allocator arenas keep ≈ 100 MB
 * after the work. The baseline compiler alone (`--liftoff-only`) holds about half the memory for a
 * small cost in speed; one allocator arena and a small young generation take what is left of it.
 * A cap on the old generation well under 2 GB makes V8 collect it when it has grown by a factor
 * of 1.3–2 rather than up to 4: the process's own JavaScript holds little that lives (PostgreSQL's
 * memory is WebAssembly's, outside that heap), so most of what its heap grows by is garbage.
 */
const DATABASE_PROCESS_FLAGS: ReadonlyArray<string> = [
  "--liftoff-only",
  "--max-semi-space-size=1",
  "--max-old-space-size=256"
]
const DATABASE_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" }

/** How long the database process may take to close PGlite when asked to stop, before it is killed. */
export const STOP_TIMEOUT = Duration.seconds(15)

/** Between restarts of a database process that exited unexpectedly. */
const RESTART_SCHEDULE = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay((delay) => Duration.min(delay, Duration.seconds(5)))
)

/**
 * The script and how to run it: the `.ts` source under tsx (tests, `npm run dev`), the compiled
 * `.js` next to this module in `dist/` (`npm start`).
 */
const serverCommand = (args: EmbeddedServerArguments): { readonly file: string; readonly argv: Array<string> } => {
  const source = import.meta.url.endsWith(".ts")
  const script = fileURLToPath(new URL(`./embedded-database-server.${source ? "ts" : "js"}`, import.meta.url))
  // tsx as this project has it, whatever the working directory.
  const tsx = () => pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
  return {
    file: process.execPath,
    argv: [...DATABASE_PROCESS_FLAGS, ...(source ? ["--import", tsx()] : []), script, JSON.stringify(args)]
  }
}

/** The last non-empty line of what a process wrote on stderr (its failures are one line). */
const lastLine = (text: string): string => text.trim().split("\n").at(-1)?.trim() ?? ""

interface Started {
  readonly child: ChildProcess
  readonly port: number
  /** Everything written on stderr so far (the last 2,000 characters). */
  readonly stderr: () => string
}

const describeExit = (code: number | null, signal: NodeJS.Signals | null): string =>
  signal !== null ? `was stopped by ${signal}` : `exited with ${code}`

/**
 * Spawns the script. `serve` succeeds once it listens; `initialize` once it exited 0. Interrupted:
 * the process is killed (it ignores SIGTERM).
 */
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

/** Waits for the process to exit; its code and signal. */
const awaitExit = (child: ChildProcess) =>
  Effect.async<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>((resume) => {
    const exited = () => resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    if (child.exitCode !== null || child.signalCode !== null) return exited()
    child.once("exit", exited)
    return Effect.sync(() => child.off("exit", exited))
  })

/** Asks the process to stop (it closes PGlite); kills it after `STOP_TIMEOUT`. */
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

/** Whether a data directory has still to be created (missing or empty). */
const isNewDataDir = (dataDir: string): Effect.Effect<boolean, EmbeddedStartError> =>
  Effect.try({
    try: () => !existsSync(dataDir) || readdirSync(dataDir).length === 0,
    catch: (cause) => new EmbeddedStartError({ message: "cannot read the data directory", cause })
  })

/** Creates a new data directory through a staging directory (see the module comment). */
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

/**
 * Makes a new data directory ready to open: initialized, unless an archive (`loadDataDir`) is to
 * seed it. The archive to open it with: `loadDataDir` when the directory is new (or in memory),
 * nothing when it exists.
 */
export const prepareDataDir = Effect.fnUntraced(function*(
  dataDir: string | undefined,
  loadDataDir: Blob | undefined
): Effect.fn.Return<Blob | undefined, EmbeddedStartError> {
  const isNew = dataDir === undefined || (yield* isNewDataDir(dataDir))
  if (!isNew) return undefined
  if (dataDir !== undefined && loadDataDir === undefined) yield* initializeDataDir(dataDir)
  return loadDataDir
})

/** Whether a process with this id exists (EPERM: it does, owned by someone else). */
const processExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Creates `file` holding `content` as one step (EEXIST when it exists): written to a file of its
 * own first and then linked into place, so that no process ever reads it empty or half-written
 * (and takes it for a stale lock). Where the file system has no hard links, created and written.
 */
const createComplete = (file: string, content: string) => {
  // Beside it (a hard link stays on one file system), with a short name of its own.
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

/** The lock files this process holds. */
const locksHeldHere = new Set<string>()

/**
 * Holds `<dataDir>.lock` (this process's id) until the scope closes: PGlite itself opens a
 * directory another process has open, and two of them corrupt it. A lock left by a process that
 * no longer exists (killed) is taken over. Two servers taking over the same stale lock at the same
 * instant could both succeed; that needs a crash and two starts within milliseconds. Two starting
 * at once on an unlocked directory cannot: the lock file appears complete or not at all.
 */
export const lockDataDir = (dataDir: string): Effect.Effect<void, EmbeddedStartError, Scope.Scope> => {
  const lockFile = `${resolve(dataDir)}.lock`
  const own = String(process.pid)
  const take = (): Effect.Effect<void, EmbeddedStartError> =>
    Effect.suspend(() => {
      // A lock file naming this process was left by an earlier process with the same id (a
      // container's server is always process 1), unless this process holds it now.
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
  /** The process id of the current database process (a restart changes it). */
  readonly pid: Effect.Effect<number | undefined>
}

/**
 * Starts the database process on `dataDir` (initialized first when new; in memory when absent),
 * supervised until the scope closes, then stopped. `loadDataDir` seeds a new database from a
 * `dumpDataDir` archive instead of initdb (tests).
 */
export const startEmbeddedDatabaseProcess = Effect.fnUntraced(function*(options: {
  readonly dataDir?: string | undefined
  readonly loadDataDir?: Blob | undefined
  /** PostgreSQL settings added to PGlite's defaults; default `PGLITE_SETTINGS`. */
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

/** Writes a data directory archive to a temporary file, removed when the scope closes. */
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
