/**
 * Log output: lines are written together, in order, when their batch is full or due.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, FiberId, FiberRefs, HashMap, List, Logger, LogLevel, LogSpan } from "effect"
import { batchedLogFmt, formatLogfmt, LOG_BATCH_MILLIS, makeLineBuffer } from "../../src/platform/log-output.ts"

describe("log output", () => {
  it("a line buffer writes nothing until its batch's flush, then every pending line in one write, in order", () => {
    const writes: Array<string> = []
    const scheduled: Array<() => void> = []
    const buffer = makeLineBuffer((chunk) => writes.push(chunk), (flush) => scheduled.push(flush))
    buffer.push("a=1")
    buffer.push("b=2")
    buffer.push("c=3")
    expect(writes).toEqual([])
    expect(scheduled).toHaveLength(1) // one flush per batch, however many lines
    scheduled[0]!()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n"])
    buffer.push("d=4")
    expect(scheduled).toHaveLength(2)
    buffer.flush() // e.g. on exit, before the scheduled flush
    scheduled[1]!()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n", "d=4\n"])
  })

  it("a batch that reaches the size limit is written at once, and the next one waits its own full delay", () => {
    const writes: Array<string> = []
    const scheduled: Array<() => void> = []
    const buffer = makeLineBuffer((chunk) => writes.push(chunk), (flush) => scheduled.push(flush), 12)
    buffer.push("a=1") // 4 of 12 (with its newline)
    buffer.push("b=2")
    expect(writes).toEqual([])
    buffer.push("c=3") // 12: full
    expect(writes).toEqual(["a=1\nb=2\nc=3\n"])
    buffer.push("d=4") // a new batch, with a flush of its own
    expect(scheduled).toHaveLength(2)
    scheduled[0]!() // the full batch's flush: already written, and it must not cut the new batch short
    expect(writes).toEqual(["a=1\nb=2\nc=3\n"])
    scheduled[1]!()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n", "d=4\n"])
  })

  it.effect("the logger writes logfmt lines with their annotations once their batch is due", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      yield* Effect.gen(function*() {
        yield* Effect.logInfo("first")
        yield* Effect.logWarning("second").pipe(Effect.annotateLogs({ request_id: "req_1" }))
      }).pipe(Effect.provide(batchedLogFmt((chunk) => writes.push(chunk))))
      expect(writes).toEqual([])
      // The batch's delay is a Node timer, not the Effect clock.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, LOG_BATCH_MILLIS * 3)))
      expect(writes).toHaveLength(1)
      const lines = writes[0]!.trimEnd().split("\n")
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(/level=INFO .*message=first/)
      expect(lines[1]).toMatch(/level=WARN .*message=second.* request_id=req_1/)
    }))

  it("masks whatever reads as a card number, wherever in the line", () => {
    const line = formatLogfmt({
      fiberId: FiberId.make(42, 0),
      logLevel: LogLevel.Info,
      message: "GET /checkout_sessions/4242424242424242 404 1ms",
      cause: Cause.empty,
      context: FiberRefs.empty(),
      spans: List.empty(),
      annotations: HashMap.make(["request_id", "5555 5555 5555 4444"]),
      date: new Date("2026-11-23T12:34:56.789Z")
    })
    expect(line).toBe(
      "timestamp=2026-11-23T12:34:56.789Z level=INFO fiber=#42 " +
        "message=\"GET /checkout_sessions/424242******4242 404 1ms\" request_id=\"555555******4444\""
    )
  })

  it("renders every line exactly as the logfmt logger of effect does", () => {
    const date = new Date("2026-11-23T12:34:56.789Z")
    const base: Logger.Logger.Options<unknown> = {
      fiberId: FiberId.make(42, 0),
      logLevel: LogLevel.Info,
      message: "GET /checkout_sessions/cs_1 200 3ms",
      cause: Cause.empty,
      context: FiberRefs.empty(),
      spans: List.empty(),
      annotations: HashMap.empty(),
      date
    }
    const cases: ReadonlyArray<Logger.Logger.Options<unknown>> = [
      base,
      { ...base, message: "plain" },
      { ...base, message: ["two", "parts with spaces"] },
      { ...base, message: { nested: { value: 1 } }, logLevel: LogLevel.Debug },
      { ...base, message: 12, logLevel: LogLevel.Warning },
      { ...base, message: "quote \" and = and\nnewline", logLevel: LogLevel.Error },
      { ...base, message: "" },
      { ...base, cause: Cause.fail(new Error("boom")), logLevel: LogLevel.Error },
      { ...base, cause: Cause.die("defect") },
      {
        ...base,
        spans: List.make(LogSpan.make("sql query", date.getTime() - 12), LogSpan.make("outer", date.getTime() - 40))
      },
      {
        ...base,
        annotations: HashMap.make(
          ["request_id", "req_abc"],
          ["with space", "a b"],
          ["object", { a: [1, 2] }],
          ["count", 3],
          ["quote\"label=", "x"]
        )
      },
      { ...base, fiberId: FiberId.composite(FiberId.make(1, 0), FiberId.make(2, 0)) },
      { ...base, fiberId: FiberId.none }
    ]
    for (const options of cases) {
      expect(formatLogfmt(options)).toBe(Logger.logfmtLogger.log(options))
    }
  })
})
