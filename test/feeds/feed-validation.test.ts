/** `validateFeedProduct` and `validateUpsertRequest`: the value, or the first failure at its JSONPath. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  validateCreateFeed,
  validateFeedProduct,
  validateUpsertRequest
} from "../../src/feeds/wire/acp/feed-validation.ts"
import { everyFieldProduct, mugProduct, tshirtProduct } from "./feed-fixtures.ts"
import { isOfficial } from "./official-feed-schema.ts"

describe("validateFeedProduct", () => {
  it("answers a valid product as it is", () => {
    for (const product of [tshirtProduct(), mugProduct(), everyFieldProduct()]) {
      expect(validateFeedProduct(product)).toEqual(Either.right(product))
    }
  })

  it("names the first failure under the root it is given", () => {
    const bad = mugProduct({ variants: [{ id: "v", title: "V", price: { amount: 5, currency: "US" } }] })
    expect(validateFeedProduct(bad)).toEqual(
      Either.left({ param: "$.variants[0].price.currency", message: expect.stringContaining("ISO 4217") })
    )
    expect(
      Either.getLeft(validateFeedProduct(bad, "$.products[7]")).pipe((left) => left._tag === "Some" && left.value.param)
    )
      .toBe("$.products[7].variants[0].price.currency")
    expect(validateFeedProduct(null)).toEqual(Either.left({ param: "$", message: "$ must be an object" }))
    const unknown = validateFeedProduct(mugProduct({ gtin: "1" }))
    expect(unknown).toEqual(Either.left({ param: "$.gtin", message: "$.gtin is not allowed" }))
  })

  it("no input value travels back in a message (keys are named, as JSONPath)", () => {
    const secret = "4242424242424242-secret"
    const failures = [
      validateFeedProduct(mugProduct({ url: secret })),
      validateFeedProduct(
        mugProduct({ variants: [{ id: "v", title: "V", price: { amount: secret, currency: "USD" } }] })
      )
    ]
    for (const failure of failures) {
      expect(Either.isLeft(failure)).toBe(true)
      expect(JSON.stringify(failure)).not.toContain("secret")
    }
  })

  it("refuses what the official schema refuses, among cases near the edges", () => {
    const cases = [
      mugProduct({ description: {} }),
      mugProduct({ media: [{ type: "image", url: "not a uri" }] }),
      mugProduct({
        variants: [{
          id: "v",
          title: "V",
          unit_price: { amount: 1, currency: "USD", measure: { value: 1, unit: "oz" } }
        }]
      }),
      mugProduct({
        variants: [{ id: "v", title: "V", media: [{ type: "image", url: "https://x.test/a.jpg", width: 1.5 }] }]
      }),
      mugProduct({ variants: [{ id: "v", title: "V", condition: "new" }] })
    ]
    for (const product of cases) {
      expect(isOfficial("Product", product), JSON.stringify(product)).toBe(false)
      expect(Either.isLeft(validateFeedProduct(product)), JSON.stringify(product)).toBe(true)
    }
  })
})

describe("validateUpsertRequest and validateCreateFeed", () => {
  it("an upsert's products, or its first failure", () => {
    expect(validateUpsertRequest({ products: [mugProduct()] })).toEqual(Either.right([mugProduct()]))
    expect(validateUpsertRequest({ products: [mugProduct(), { id: "x" }] })).toEqual(
      Either.left({ param: "$.products[1].variants", message: "$.products[1].variants is required" })
    )
  })

  it("a creation's target_country is told apart from its other failures", () => {
    expect(validateCreateFeed({ target_country: "FR" })).toEqual(Either.right({ target_country: "FR" }))
    expect(
      Either.getLeft(validateCreateFeed({ target_country: "XX" })).pipe((left) => left._tag === "Some" && left.value)
    )
      .toMatchObject({ param: "$.target_country", targetCountry: true })
    expect(Either.getLeft(validateCreateFeed({ country: "FR" })).pipe((left) => left._tag === "Some" && left.value))
      .toMatchObject({ param: "$.country", targetCountry: false })
  })
})
