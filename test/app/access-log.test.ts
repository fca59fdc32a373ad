import { describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, Logger } from "effect"
import { get, testApp } from "../support/http.ts"

/** Every log line as `message {annotations}`. */
const capturingLogger = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, message }) =>
    void lines.push(`${String(message)} ${JSON.stringify(Object.fromEntries(HashMap.toEntries(annotations)))}`)
  )
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("the access log", () => {
  it.effect("one line per request, under that request's Request-Id, and nothing of it after the request", () => {
    const { layer, lines } = capturingLogger()
    return Effect.gen(function*() {
      yield* get("/checkout_sessions/cs_missing", { headers: { "request-id": "req-one" } })
      yield* get("/healthz", { headers: { "request-id": "req-two" } })
      const generated = yield* get("/nope")
      yield* Effect.logInfo("after the requests")
      expect(lines).toEqual([
        expect.stringMatching(/^GET \/checkout_sessions\/cs_missing 404 \d+ms \{"request_id":"req-one"\}$/),
        expect.stringMatching(/^GET \/healthz 200 \d+ms \{"request_id":"req-two"\}$/),
        `GET /nope 404 ${lines[2]?.split(" ")[3]} {"request_id":"${generated.headers.get("request-id")}"}`,
        "after the requests {}"
      ])
    }).pipe(Effect.provide(testApp()), Effect.provide(layer))
  })

  it.effect("a 404 shows back no card number of the path, and at most 200 characters of it", () =>
    Effect.gen(function*() {
      for (const path of ["/checkout_sessions/4242424242424242", "/nowhere/4242-4242-4242-4242"]) {
        const response = yield* get(path)
        expect(response.status).toBe(404)
        expect(response.text).not.toMatch(/4242.?4242.?4242.?4242/)
        expect(response.body.message).toContain("424242******4242")
      }
      const long = yield* get(`/nowhere/${"x".repeat(5000)}`)
      expect(long.body.message).toBe(`No route GET /nowhere/${"x".repeat(191)}….`)
    }).pipe(Effect.provide(testApp())))
})
