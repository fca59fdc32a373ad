/** Operating-system processes seen from tests (Linux and macOS: `ps`, `pgrep`). */
import { execFileSync } from "node:child_process"

/** Whether a process exists and has not exited (a zombie, exited but not yet reaped, has). */
export const isRunning = (pid: number): boolean => {
  try {
    const state = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim()
    return state !== "" && !state.startsWith("Z")
  } catch {
    return false // ps exits 1 when there is no such process
  }
}

/** The process ids of a process's children. */
export const childrenOf = (pid: number): Array<number> => {
  try {
    return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map(Number)
  } catch {
    return [] // pgrep exits 1 when there is none
  }
}
