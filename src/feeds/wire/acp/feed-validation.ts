/**
 * Pure checks of feed payloads against the 2026-04-17 schemas, strictly (an unknown key is refused):
 * each answers the value or its first failure, `param` the failure's JSONPath. No input value is echoed.
 */
import { Either, Schema } from "effect"
import { firstFailureAtJsonPath } from "../../../shared/schema-failure.ts"
import { toJsonPath } from "../../../shared/schema-helpers.ts"
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from "../../../shared/storable-text.ts"
import { CreateFeedRequest, Product } from "./v2026-04-17.ts"

/** Products one upsert may carry; the body limit bounds their size. */
export const MAX_PRODUCTS_PER_UPSERT = 1000

export interface FeedValidationFailure {
  readonly param: string
  readonly message: string
}

const strictly = { errors: "first", onExcessProperty: "error" } as const

const decodeProduct = Schema.decodeUnknownEither(Product, strictly)
const decodeCreate = Schema.decodeUnknownEither(CreateFeedRequest, strictly)

const fail = (param: string, message: string): Either.Either<never, FeedValidationFailure> =>
  Either.left({ param, message })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A text storage cannot keep, under `root`. */
const unstorable = (value: unknown, root: string): FeedValidationFailure | undefined => {
  const path = unstorableTextPath(value)
  if (path === undefined) return undefined
  const param = root + path.slice(1)
  return { param, message: `${param} ${UNSTORABLE_TEXT_MESSAGE}` }
}

/**
 * One `Product`, found at `root` of the request (`$.products[3]`); its variant ids are unique. A valid
 * value is answered as given, keys in the sender's order: the schema transforms nothing and allows no
 * other key, so it is exactly its decoded `Product`.
 */
export const validateFeedProduct = (
  value: unknown,
  root = "$"
): Either.Either<Product, FeedValidationFailure> => {
  const text = unstorable(value, root)
  if (text !== undefined) return Either.left(text)
  const decoded = decodeProduct(value)
  if (Either.isLeft(decoded)) {
    const first = firstFailureAtJsonPath(decoded.left, root)
    return fail(first.param, first.message)
  }
  const seen = new Set<string>()
  for (const [index, variant] of decoded.right.variants.entries()) {
    if (seen.has(variant.id)) {
      const param = toJsonPath(["variants", index, "id"], root)
      return fail(param, `${param} repeats the id of an earlier variant of this product`)
    }
    seen.add(variant.id)
  }
  return Either.right(value as Product)
}

/** An `UpsertProductsRequest` of 1 to `MAX_PRODUCTS_PER_UPSERT` products with distinct ids. */
export const validateUpsertRequest = (
  value: unknown
): Either.Either<ReadonlyArray<Product>, FeedValidationFailure> => {
  if (!isObject(value)) return fail("$", "$ must be an object with products")
  for (const key of Object.keys(value)) {
    if (key !== "products") return fail(toJsonPath([key]), `${toJsonPath([key])} is not allowed`)
  }
  const products = value.products
  if (products === undefined) return fail("$.products", "$.products is required")
  if (!Array.isArray(products)) return fail("$.products", "$.products must be an array of products")
  if (products.length === 0) return fail("$.products", "products must contain at least one valid Product")
  if (products.length > MAX_PRODUCTS_PER_UPSERT) {
    return fail("$.products", `$.products must have at most ${MAX_PRODUCTS_PER_UPSERT} products per request`)
  }
  const valid: Array<Product> = []
  const seen = new Set<string>()
  for (const [index, item] of products.entries()) {
    const product = validateFeedProduct(item, `$.products[${index}]`)
    if (Either.isLeft(product)) return Either.left(product.left)
    if (seen.has(product.right.id)) {
      const param = `$.products[${index}].id`
      return fail(param, `${param} repeats the id of an earlier product of this request`)
    }
    seen.add(product.right.id)
    valid.push(product.right)
  }
  return Either.right(valid)
}

export type CreateFeedFailure = FeedValidationFailure & {
  /** `target_country` is refused with its own code (`invalid_target_country`). */
  readonly targetCountry: boolean
}

/** A `CreateFeedRequest`: at most `target_country`, an assigned ISO 3166-1 alpha-2 code. */
export const validateCreateFeed = (value: unknown): Either.Either<CreateFeedRequest, CreateFeedFailure> => {
  const text = unstorable(value, "$")
  if (text !== undefined) return Either.left({ ...text, targetCountry: false })
  const decoded = decodeCreate(value)
  if (Either.isRight(decoded)) return Either.right(decoded.right)
  const first = firstFailureAtJsonPath(decoded.left)
  return Either.left({ param: first.param, message: first.message, targetCountry: first.param === "$.target_country" })
}
