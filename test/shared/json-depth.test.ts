import { describe, expect, it } from "@effect/vitest"
import { jsonDepthProblem, MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts"

/** `levels` arrays, one inside the other, as JSON text. */
const nestedArrays = (levels: number) => "[".repeat(levels) + "]".repeat(levels)

describe("jsonDepthProblem", () => {
  it("accepts scalars and values nested up to the limit", () => {
    for (const value of [null, 1, "text", true]) expect(jsonDepthProblem(value)).toBeUndefined()
    expect(jsonDepthProblem({})).toBeUndefined()
    expect(jsonDepthProblem(JSON.parse(nestedArrays(MAX_JSON_DEPTH)))).toBeUndefined()
    expect(jsonDepthProblem({ a: [1, { b: [] }] }, 4)).toBeUndefined()
  })

  it("names the first container (in document order) nested deeper than the limit", () => {
    expect(jsonDepthProblem(JSON.parse(nestedArrays(MAX_JSON_DEPTH + 1)))).toBe("$" + "[0]".repeat(MAX_JSON_DEPTH))
    expect(jsonDepthProblem({ a: [1, { b: [] }] }, 3)).toBe("$.a[1].b")
    expect(jsonDepthProblem({ a: [1, { b: [] }] }, 2)).toBe("$.a[1]")
    expect(jsonDepthProblem({ a: [[]], "z z": [[[]]] }, 2)).toBe("$.a[0]")
    expect(jsonDepthProblem({ ok: [1], "z z": [[[]]] }, 2)).toBe("$[\"z z\"][0]")
    expect(jsonDepthProblem(JSON.parse("{\"__proto__\": {\"x\": {}}}"), 2)).toBe("$.__proto__.x")
    expect(jsonDepthProblem([], 0)).toBe("$")
  })

  it("walks values far deeper than any stack without overflowing", () => {
    // Half a million levels: within 1 MiB, and beyond what JSON.stringify can serialize.
    const deep = JSON.parse(nestedArrays(500_000))
    expect(() => JSON.stringify(deep)).toThrow(RangeError)
    expect(jsonDepthProblem(deep)).toBe("$" + "[0]".repeat(MAX_JSON_DEPTH))
    const deepObject = JSON.parse("{\"a\":".repeat(200_000) + "1" + "}".repeat(200_000))
    expect(jsonDepthProblem(deepObject)).toBe("$" + ".a".repeat(MAX_JSON_DEPTH))
  })

  it("is linear in a wide value", () => {
    const wide = { items: Array.from({ length: 100_000 }, (_, i) => ({ id: `x${i}`, tags: [i] })) }
    expect(jsonDepthProblem(wide)).toBeUndefined()
    expect(jsonDepthProblem(wide, 2)).toBe("$.items[0]")
  })
})
