import { HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { carriesRetryAfter, withRetryAfter, withRetryAfterOn503 } from "../../src/platform/http/retry-after.ts"

describe("Retry-After", () => {
  it("every 503 carries it: 2 seconds unless the route said otherwise", () => {
    expect(withRetryAfterOn503(HttpServerResponse.empty({ status: 503 })).headers["retry-after"]).toBe("2")
    const vault = withRetryAfter(5)(HttpServerResponse.empty({ status: 503 }))
    expect(withRetryAfterOn503(vault).headers["retry-after"]).toBe("5")
    expect(withRetryAfterOn503(HttpServerResponse.empty({ status: 500 })).headers["retry-after"]).toBeUndefined()
  })

  it("is documented on 429, 503 and the 409 of an idempotent POST", () => {
    expect([429, 503].every((status) => carriesRetryAfter(status, false))).toBe(true)
    expect(carriesRetryAfter(409, true)).toBe(true)
    expect(carriesRetryAfter(409, false)).toBe(false)
    expect(carriesRetryAfter(400, true)).toBe(false)
  })
})
