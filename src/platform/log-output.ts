/**
 * Log lines as logfmt on stdout, in batches (a stdout write is a synchronous system call): written at
 * `LOG_BATCH_BYTES`, after `LOG_BATCH_MILLIS` or on exit, in order; only a SIGKILL loses lines.
 */
import { Cause, FiberId, Inspectable, Layer, Logger } from "effect"
import { maskCardNumbers } from "../shared/card-numbers.ts"

export const LOG_BATCH_BYTES = 32 * 1024
export const LOG_BATCH_MILLIS = 50

export interface LineBuffer {
  readonly push: (line: string) => void
  readonly flush: () => void
}

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
  // Counts batches, so that a flush scheduled for one already written when full spares the next.
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

const bareValue = /^[^\s"=]*$/
const labelUnsafe = /[\s="]/g

const logfmtValue = (text: string) => (bareValue.test(text) ? text : JSON.stringify(text))
const logfmtLabel = (label: string) => label.replace(labelUnsafe, "_")

/** `Logger.logfmtLogger`'s line exactly (`test/platform/log-output.test.ts`), cheaper, card numbers masked. */
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
