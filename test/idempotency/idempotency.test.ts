import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { createHash } from "node:crypto"
import {
  canonicalJson,
  fingerprintMatches,
  isReplayableStatus,
  requestFingerprint
} from "../../src/idempotency/model/idempotency.ts"
import { isValidIdempotencyKey } from "../../src/platform/http/idempotency-key.ts"
import { MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts"

describe("canonicalJson", () => {
  it("sorts object keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      "{\"a\":{\"c\":null,\"d\":[3,{\"y\":2,\"z\":1}]},\"b\":1}"
    )
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]))
  })

  it("keeps __proto__ as data", () => {
    expect(canonicalJson(JSON.parse("{\"__proto__\":{\"x\":1},\"a\":2}"))).toBe("{\"__proto__\":{\"x\":1},\"a\":2}")
  })

  it("is the same for any key order of the same value (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const shuffled = JSON.parse(
          JSON.stringify(value, (_key, v) =>
            v !== null && typeof v === "object" && !Array.isArray(v)
              ? Object.fromEntries(Object.entries(v).reverse())
              : v)
        )
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value))
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)))
      })
    )
  })
})

describe("requestFingerprint", () => {
  const key = Buffer.alloc(32, 1)
  const fp = (body: string) => requestFingerprint(body, key)

  it("ignores key order and whitespace, but not null versus absent, types or array order", () => {
    const base = fp("{\"a\":1,\"b\":[1,2]}")
    expect(fp(" { \"b\" : [1,2], \"a\" : 1 } ")).toBe(base)
    expect(fp("{\"a\":1.0,\"b\":[1,2]}")).toBe(base)
    expect(fp("{\"a\":1,\"b\":[2,1]}")).not.toBe(base)
    expect(fp("{\"a\":\"1\",\"b\":[1,2]}")).not.toBe(base)
    expect(fp("{\"a\":1,\"b\":[1,2],\"c\":null}")).not.toBe(base)
    expect(base).toMatch(/^hmac1:[0-9a-f]{64}$/)
  })

  it("fingerprints a body that is not JSON by its bytes", () => {
    expect(fp("not json")).toBe(fp("not json"))
    expect(fp("not json")).not.toBe(fp("not  json"))
    expect(fp("")).not.toBe(fp("\"\""))
  })

  it("fingerprints JSON nested deeper than MAX_JSON_DEPTH by its bytes, without walking it", () => {
    const deep = (levels: number, spacing = "") => "[".repeat(levels) + spacing + "]".repeat(levels)
    expect(fp(deep(MAX_JSON_DEPTH))).toBe(fp(deep(MAX_JSON_DEPTH, " ")))
    expect(fp(deep(MAX_JSON_DEPTH + 1))).not.toBe(fp(deep(MAX_JSON_DEPTH + 1, " ")))
    // Half a million levels (under 1 MiB): canonical JSON of it would overflow the stack.
    expect(fp(deep(500_000))).toMatch(/^hmac1:[0-9a-f]{64}$/)
    expect(fp(deep(500_000))).not.toBe(fp(deep(499_999)))
  })

  it("is keyed: without the key, hashing guessed bodies finds nothing (a body may hold a card)", () => {
    const body = "{\"payment_method\":{\"number\":\"4242424242424242\",\"cvc\":\"123\"}}"
    const unkeyed = createHash("sha256").update(`json\0${canonicalJson(JSON.parse(body))}`, "utf8").digest("hex")
    expect(fp(body)).not.toContain(unkeyed)
    expect(requestFingerprint(body, Buffer.alloc(32, 2))).not.toBe(fp(body))
  })
})

describe("fingerprintMatches", () => {
  const current = Buffer.alloc(32, 1)
  const retired = Buffer.alloc(32, 2)
  const body = "{\"a\":1}"

  it("recognizes the body under the current key, a retired key, or the unkeyed hash of earlier versions", () => {
    const keys = { current, retired: [retired] }
    expect(fingerprintMatches(requestFingerprint(" {\"a\" : 1} ", current), body, keys)).toBe(true)
    expect(fingerprintMatches(requestFingerprint(body, retired), body, keys)).toBe(true)
    const legacy = createHash("sha256").update("json\0{\"a\":1}", "utf8").digest("hex")
    expect(fingerprintMatches(legacy, body, keys)).toBe(true)
  })

  it("refuses another body, and a key that is no longer configured", () => {
    expect(fingerprintMatches(requestFingerprint("{\"a\":2}", current), body, { current, retired: [retired] })).toBe(
      false
    )
    expect(fingerprintMatches(requestFingerprint(body, retired), body, { current, retired: [] })).toBe(false)
    expect(fingerprintMatches("0".repeat(64), body, { current, retired: [] })).toBe(false)
  })
})

describe("isValidIdempotencyKey", () => {
  it("accepts 1-255 printable ASCII characters without spaces", () => {
    expect(isValidIdempotencyKey("a")).toBe(true)
    expect(isValidIdempotencyKey("x".repeat(255))).toBe(true)
    expect(isValidIdempotencyKey("9f1c-4d1e_~!@#$%^&*()[]{}")).toBe(true)
    expect(isValidIdempotencyKey("")).toBe(false)
    expect(isValidIdempotencyKey("x".repeat(256))).toBe(false)
    expect(isValidIdempotencyKey("has space")).toBe(false)
    expect(isValidIdempotencyKey("tab\there")).toBe(false)
    expect(isValidIdempotencyKey("ünïcode")).toBe(false)
  })
})

describe("isReplayableStatus", () => {
  it("keeps 2xx and 4xx except 401, 424 and 429; never 5xx", () => {
    expect([200, 201, 400, 402, 404, 409, 422].every(isReplayableStatus)).toBe(true)
    expect([401, 424, 429, 500, 502, 503].some(isReplayableStatus)).toBe(false)
  })
})
