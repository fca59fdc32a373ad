import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { firstFailureAtJsonPath, firstSchemaFailure } from "../../src/shared/schema-failure.ts"

const failureOf = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown, root?: string) => {
  const result = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })(input)
  if (Either.isRight(result)) throw new Error("expected a decode failure")
  return firstFailureAtJsonPath(result.left, root)
}

const Handler = Schema.Struct({ handler_id: Schema.String, instrument: Schema.Struct({ type: Schema.String }) })
const Legacy = Schema.Struct({ token: Schema.String, provider: Schema.String, note: Schema.optional(Schema.String) })
const Body = Schema.Struct({
  items: Schema.Array(
    Schema.Struct({ quantity: Schema.Int.pipe(Schema.positive({ message: () => "must be positive" })) })
  ),
  kind: Schema.Literal("a", "b"),
  payment: Schema.Union(Handler, Legacy)
})
const valid = { items: [{ quantity: 1 }], kind: "a", payment: { token: "t", provider: "p" } }

describe("the first schema failure", () => {
  it("gives the JSONPath, missing or invalid, and the expectation", () => {
    expect(failureOf(Body, { ...valid, items: [{ quantity: 1 }, { quantity: 0 }] })).toEqual({
      kind: "invalid",
      param: "$.items[1].quantity",
      message: "$.items[1].quantity must be positive"
    })
    expect(failureOf(Body, { ...valid, items: [{}] })).toEqual({
      kind: "missing",
      param: "$.items[0].quantity",
      message: "$.items[0].quantity is required"
    })
    expect(failureOf(Body, { ...valid, items: [{ quantity: 1.5 }] }).message).toBe(
      "$.items[0].quantity must be an integer"
    )
    expect(failureOf(Body, { ...valid, kind: "c" }).message).toBe("$.kind must be one of \"a\", \"b\"")
    expect(failureOf(Body, { ...valid, items: [{ quantity: 0 }] }, "$.body").param).toBe("$.body.items[0].quantity")
  })

  it("a value of the right type that breaks a rule is told the rule, not its type", () => {
    const Card = Schema.Struct({
      exp_month: Schema.String.pipe(Schema.pattern(/^(0[1-9]|1[0-2])$/)),
      name: Schema.String.pipe(Schema.maxLength(4)),
      amount: Schema.Int.pipe(Schema.positive()),
      count: Schema.Int,
      browser: Schema.Struct({ js: Schema.Boolean, width: Schema.optional(Schema.Number) }).pipe(
        Schema.filter((b) => !b.js || b.width !== undefined || "with js, width is required")
      )
    })
    const ok = { exp_month: "01", name: "Ada", amount: 1, count: 1, browser: { js: false } }
    expect(failureOf(Card, { ...ok, exp_month: "13" }).message).toBe(
      "$.exp_month must be a string matching the pattern ^(0[1-9]|1[0-2])$"
    )
    expect(failureOf(Card, { ...ok, name: "Lovelace" }).message).toBe(
      "$.name must be a string at most 4 character(s) long"
    )
    expect(failureOf(Card, { ...ok, amount: 0 }).message).toBe("$.amount must be a positive number")
    expect(failureOf(Card, { ...ok, count: 1.5 }).message).toBe("$.count must be an integer")
    expect(failureOf(Card, { ...ok, browser: { js: true } }).message).toBe("$.browser with js, width is required")
    expect(failureOf(Card, { ...ok, exp_month: 13 }).message).toBe("$.exp_month must be a string")
  })

  it("never echoes the input value", () => {
    const secret = "4242424242424242"
    const failure = failureOf(Schema.Struct({ number: Schema.Number }), { number: secret })
    expect(JSON.stringify(failure)).not.toContain(secret)
    expect(failure.message).toBe("$.number must be a number")
  })

  it("a union of object shapes is reported in the shape whose keys were sent", () => {
    expect(failureOf(Body, { ...valid, payment: { token: "t" } })).toMatchObject({
      kind: "missing",
      param: "$.payment.provider"
    })
    expect(failureOf(Body, { ...valid, payment: { handler_id: "h" } })).toMatchObject({
      kind: "missing",
      param: "$.payment.instrument"
    })
    expect(failureOf(Body, { ...valid, payment: { note: "optional keys choose nothing" } })).toEqual({
      kind: "missing",
      param: "$.payment.handler_id",
      message: "$.payment must have handler_id and instrument, or token and provider."
    })
    expect(failureOf(Body, { ...valid, payment: "tok" })).toEqual({
      kind: "invalid",
      param: "$.payment",
      message: "$.payment must be an object"
    })
  })

  it("keeps the path as segments, and the subject apart from it", () => {
    const result = Schema.decodeUnknownEither(Body)({ ...valid, payment: {} })
    if (Either.isRight(result)) throw new Error("expected a decode failure")
    expect(firstSchemaFailure(result.left)).toEqual({
      kind: "missing",
      path: ["payment", "handler_id"],
      subject: ["payment"],
      expectation: "must have handler_id and instrument, or token and provider."
    })
  })
})
