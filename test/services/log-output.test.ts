/**
 * Log output: lines logged in one event-loop turn are written together, in order, right after it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { batchedLogFmt, makeLineBuffer } from "../../src/services/log-output.ts"

describe("log output", () => {
  it("a line buffer writes nothing until its flush, then every pending line in one write, in order", () => {
    const writes: Array<string> = []
    const scheduled: Array<() => void> = []
    const buffer = makeLineBuffer((chunk) => writes.push(chunk), (flush) => scheduled.push(flush))
    buffer.push("a=1")
    buffer.push("b=2")
    buffer.push("c=3")
    expect(writes).toEqual([])
    expect(scheduled).toHaveLength(1) // one flush per turn, however many lines
    scheduled[0]!()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n"])
    buffer.push("d=4")
    expect(scheduled).toHaveLength(2)
    buffer.flush() // e.g. on exit, before the scheduled flush
    scheduled[1]!()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n", "d=4\n"])
  })

  it.effect("the logger writes logfmt lines with their annotations after the turn", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      yield* Effect.gen(function*() {
        yield* Effect.logInfo("first")
        yield* Effect.logWarning("second").pipe(Effect.annotateLogs({ request_id: "req_1" }))
      }).pipe(Effect.provide(batchedLogFmt((chunk) => writes.push(chunk))))
      expect(writes).toEqual([])
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(writes).toHaveLength(1)
      const lines = writes[0]!.trimEnd().split("\n")
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(/level=INFO .*message=first/)
      expect(lines[1]).toMatch(/level=WARN .*message=second.* request_id=req_1/)
    }))
})
