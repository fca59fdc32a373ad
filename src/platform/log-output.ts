/**
 * Where log lines go: logfmt lines on stdout, written in batches.
 *
 * Writing stdout is a synchronous system call per write for files and pipes on Linux; with one
 * access-log line per request, that would be one extra syscall per request on the hot path.
 * Lines logged during one turn of the event loop are joined and written once, right after it
 * (`setImmediate`), and whatever is pending is written on process exit. The order of lines is
 * kept; a line is at most one event-loop turn late. Only a SIGKILL can lose that last turn.
 */
import { Cause, FiberId, Inspectable, Layer, Logger } from "effect"

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

/** Values that need no quotes in logfmt: no whitespace, double quote or equals sign. */
const bareValue = /^[^\s"=]*$/
const labelUnsafe = /[\s="]/g

const logfmtValue = (text: string) => (bareValue.test(text) ? text : JSON.stringify(text))
const logfmtLabel = (label: string) => label.replace(labelUnsafe, "_")

/**
 * A log line in logfmt, exactly as `Logger.logfmtLogger` of `effect` renders it, at a fraction
 * of its cost: the access log writes one line per request, and the library's renderer builds a
 * set to name the fiber and a match array per value. `test/platform/log-output.test.ts`
 * checks the two agree.
 */
export const formatLogfmt = (options: Logger.Logger.Options<unknown>): string => {
  const { annotations, cause, date, fiberId, logLevel, message, spans } = options
  let out = `timestamp=${date.toISOString()} level=${logLevel.label} fiber=${
    fiberId._tag === "Runtime" ? `#${fiberId.id}` : FiberId.threadName(fiberId)
  }`
  if (Array.isArray(message)) {
    for (const part of message) out += ` message=${logfmtValue(Inspectable.toStringUnknown(part, 0))}`
  } else {
    out += ` message=${logfmtValue(Inspectable.toStringUnknown(message, 0))}`
  }
  if (!Cause.isEmptyType(cause)) out += ` cause=${logfmtValue(Cause.pretty(cause, { renderErrorCause: true }))}`
  if (spans._tag === "Cons") {
    const now = date.getTime()
    for (const span of spans) out += ` ${logfmtLabel(span.label)}=${now - span.startTime}ms`
  }
  for (const [label, value] of annotations) {
    out += ` ${logfmtLabel(label)}=${logfmtValue(Inspectable.toStringUnknown(value, 0))}`
  }
  return out
}

/** The logfmt lines of `formatLogfmt`, batched onto `write` (stdout by default). */
export const batchedLogFmt = (
  write: (chunk: string) => void = (chunk) => void process.stdout.write(chunk)
): Layer.Layer<never> => {
  const buffer = makeLineBuffer(write)
  process.once("exit", buffer.flush)
  return Logger.replace(
    Logger.defaultLogger,
    Logger.make((options) => buffer.push(formatLogfmt(options)))
  )
}
