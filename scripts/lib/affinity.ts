/**
 * Where each process of a bench runs. On a machine with `taskset` and at least two cores, the
 * server under test gets core 0 to itself; the load generator, PostgreSQL and the bench's own
 * process share the others. Otherwise nothing is pinned and the results say so: figures measured
 * with the load generator on the server's core understate the server (it lends its core away).
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { availableParallelism } from "node:os"

const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

const cores = availableParallelism()

/** Whether processes are pinned (`--no-pin` turns it off). */
export const pinning = (wanted: boolean) => wanted && hasTaskset && cores >= 2

/** The server's core and the cores of everything else, as `taskset -c` lists. */
export const SERVER_CORES = "0"
export const LOAD_CORES = cores > 2 ? `1-${cores - 1}` : cores === 2 ? "1" : "0"
/** How many cores the load generator may use. */
export const LOAD_CORE_COUNT = Math.max(1, cores - 1)

/** The command and arguments that run `command args` on `cpus` (as is when not pinning). */
export const onCores = (pin: boolean, cpus: string, command: string, args: ReadonlyArray<string>) =>
  pin ? { command: "taskset", args: ["-c", cpus, command, ...args] } : { command, args: [...args] }

/** Moves a running process (every thread) to `cpus`; false when it could not. */
export const movePid = (pid: number, cpus: string): boolean => {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const postgresPids = (): Array<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres"
    } catch {
      return false
    }
  })

/**
 * Moves PostgreSQL (the postmaster and every running backend; new backends inherit the
 * postmaster's cores) onto the load cores. Returns how to give it every core back, and how many
 * processes moved (0 when PostgreSQL is not local or not ours to move).
 */
export const pinPostgres = (): { readonly moved: number; readonly restore: () => void } => {
  const pids = postgresPids()
  const moved = pids.filter((pid) => movePid(pid, LOAD_CORES)).length
  return {
    moved,
    restore: () => {
      for (const pid of postgresPids()) movePid(pid, `0-${cores - 1}`)
    }
  }
}
