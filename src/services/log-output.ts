/**
 * Where log lines go: logfmt lines on stdout, written in batches.
 *
 * Writing stdout is a synchronous system call per write for files and pipes on Linux; with one
 * access-log line per request, that was one extra syscall per request on the hot path (issue 9).
 * Lines logged during one turn of the event loop are joined and written once, right after it
 * (`setImmediate`), and whatever is pending is written on process exit. The order of lines is
 * kept; a line is at most one event-loop turn late. Only a SIGKILL can lose that last turn.
 */
import { Layer, Logger } from "effect"

export interface LineBuffer {
  readonly push: (line: string) => void
  /** Writes what is pending now (also done on process exit). */
  readonly flush: () => void
}

export const makeLineBuffer = (
  write: (chunk: string) => void,
  schedule: (flush: () => void) => void = (flush) => void setImmediate(flush)
): LineBuffer => {
  let pending: Array<string> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const chunk = pending.join("")
    pending = []
    write(chunk)
  }
  return {
    push: (line) => {
      pending.push(line + "\n")
      if (!scheduled) {
        scheduled = true
        schedule(flush)
      }
    },
    flush
  }
}

/** The logfmt logger of `effect`, its lines batched onto `write` (stdout by default). */
export const batchedLogFmt = (
  write: (chunk: string) => void = (chunk) => void process.stdout.write(chunk)
): Layer.Layer<never> => {
  const buffer = makeLineBuffer(write)
  process.once("exit", buffer.flush)
  return Logger.replace(
    Logger.defaultLogger,
    Logger.make((options) => buffer.push(Logger.logfmtLogger.log(options)))
  )
}
