import { describe, expect, it } from "@effect/vitest"
import { bundleJsonSchema } from "../../src/shared/json-schema-bundle.ts"

describe("bundleJsonSchema", () => {
  it("inlines every reference to $defs, keeps siblings, and leaves no $defs, $schema or $id", () => {
    const bundled = bundleJsonSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      $defs: {
        Item: { type: "object", properties: { id: { $ref: "#/$defs/Id" } }, required: ["id"] },
        Id: { type: "string", minLength: 1 }
      },
      type: "object",
      properties: {
        items: { type: "array", items: { $ref: "#/$defs/Item" } },
        main: { $ref: "#/$defs/Item", description: "the first" },
        any: { $id: "/schemas/unknown", title: "unknown" }
      }
    })
    expect(bundled).toEqual({
      type: "object",
      properties: {
        items: {
          type: "array",
          items: { type: "object", properties: { id: { type: "string", minLength: 1 } }, required: ["id"] }
        },
        main: {
          type: "object",
          properties: { id: { type: "string", minLength: 1 } },
          required: ["id"],
          description: "the first"
        },
        any: { title: "unknown" }
      }
    })
  })

  it("refuses a recursive or unresolvable schema", () => {
    expect(() =>
      bundleJsonSchema({ $defs: { Node: { properties: { next: { $ref: "#/$defs/Node" } } } }, $ref: "#/$defs/Node" })
    )
      .toThrow(/recursive/)
    expect(() => bundleJsonSchema({ $ref: "#/$defs/Missing" })).toThrow(/unresolvable/)
  })
})
