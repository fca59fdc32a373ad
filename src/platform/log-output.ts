/**
 * Where log lines go: logfmt lines on stdout, written in batches.
 *
 * Writing stdout is synchronous for files and pipes on Linux, and each write goes through Node's
 * stream machinery and a system call; with one access-log line per request, writing after every
 * turn of the event loop made such a write every few requests under load. Lines are joined and
 * written once `LOG_BATCH_BYTES` are pending, or `LOG_BATCH_MILLIS` after the first of them,
 * whichever comes first, and whatever is pending is written on process exit. The order of lines
 * is kept; a line is at most `LOG_BATCH_MILLIS` late, and only a SIGKILL can lose it.
 */
import { Cause, FiberId, Inspectable, Layer, Logger } from "effect"
import { maskCardNumbers } from "../shared/card-numbers.ts"

/** Pending bytes (UTF-16 code units, close enough) that are written at once. */
export const LOG_BATCH_BYTES = 32 * 1024
/** The longest a line waits for its batch. */
export const LOG_BATCH_MILLIS = 50

export interface LineBuffer {
  readonly push: (line: string) => void
  /** Writes what is pending now (also done on process exit). */
  readonly flush: () => void
}

/** Runs `flush` after `LOG_BATCH_MILLIS`, without keeping the process alive for it. */
const afterBatchDelay = (flush: () => void) => {
  setTimeout(flush, LOG_BATCH_MILLIS).unref()
}

export const makeLineBuffer = (
  write: (chunk: string) => void,
  schedule: (flush: () => void) => void = afterBatchDelay,
  maxPending: number = LOG_BATCH_BYTES
): LineBuffer => {
  let pending: Array<string> = []
  let pendingLength = 0
  // A batch: counted at its first line, so a flush scheduled for an earlier batch (already written
  // because it grew full) leaves a later one its full delay.
  let batch = 0
  const flush = () => {
    if (pending.length === 0) return
    const chunk = pending.join("")
    pending = []
    pendingLength = 0
    write(chunk)
  }
  return {
    push: (line) => {
      const starts = pending.length === 0
      if (starts) batch++
      pending.push(line + "\n")
      pendingLength += line.length + 1
      if (pendingLength >= maxPending) {
        flush()
      } else if (starts) {
        const mine = batch
        schedule(() => {
          if (batch === mine) flush()
        })
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
 * checks the two agree. What reads as a card number is masked in the whole line: a client's
 * text (a path, a request id, a free-text field) may hold one, and no log keeps it.
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
  return maskCardNumbers(out)
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
