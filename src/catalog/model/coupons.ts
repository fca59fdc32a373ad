/** The catalog's coupons (the discount extension, CONTRACT §9): their file format and the rules across them. */
import { Schema } from "effect"
import { Amount, BoundedString, CurrencyCode, optional, PositiveAmount } from "../../shared/schema-helpers.ts"

export const MAX_DISCOUNT_CODE_LENGTH = 64

/** Codes match case-insensitively, surrounding spaces ignored. */
export const normalizeCode = (code: string): string => code.trim().toUpperCase()

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

export const CouponTimestamp = Schema.String.pipe(
  Schema.filter((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "must be an RFC 3339 timestamp, e.g. 2026-01-30T00:00:00Z"
  })
)

/** A percentage 0 < x ≤ 100 with at most 4 decimals (so it is an integer number of ppm). */
export const PercentOff = Schema.Number.pipe(
  Schema.filter((n) =>
    Number.isFinite(n) && n > 0 && n <= 100 && Number.isInteger(Math.round(n * 10_000)) &&
    Math.abs(n * 10_000 - Math.round(n * 10_000)) < 1e-6, {
    message: () => "must be a number greater than 0 and at most 100, with at most 4 decimals"
  })
)

export const CatalogCoupon = Schema.Struct({
  id: BoundedString(256),
  name: BoundedString(256),
  code: BoundedString(MAX_DISCOUNT_CODE_LENGTH),
  percent_off: optional(PercentOff),
  amount_off: optional(PositiveAmount),
  /** Required with `amount_off`; must be the catalog currency. */
  currency: optional(CurrencyCode),
  start: optional(CouponTimestamp),
  end: optional(CouponTimestamp),
  max_redemptions: optional(Schema.Int.pipe(Schema.positive())),
  /** Initial count; seeds the database the first time the coupon is seen. */
  times_redeemed: optional(Schema.Int.pipe(Schema.nonNegative())),
  /** Least items base amount (before discounts) the coupon needs. */
  minimum_subtotal: optional(Amount),
  /** Applied without a code when eligible. */
  automatic: optional(Schema.Boolean),
  duration: optional(Schema.Literal("once")),
  metadata: optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}).annotations({ identifier: "CatalogCoupon" })
export type CatalogCoupon = typeof CatalogCoupon.Type

export const validateCoupons = (coupons: ReadonlyArray<CatalogCoupon>, currency: string): Array<string> => {
  const errors: Array<string> = []
  const ids = new Map<string, number>()
  const codes = new Map<string, number>()
  coupons.forEach((coupon, i) => {
    const path = `$.coupons[${i}]`
    const firstId = ids.get(coupon.id)
    if (firstId !== undefined) {
      errors.push(`${path}.id: duplicate coupon id ${JSON.stringify(coupon.id)} (first at $.coupons[${firstId}])`)
    } else ids.set(coupon.id, i)
    const code = normalizeCode(coupon.code)
    const firstCode = codes.get(code)
    if (firstCode !== undefined) {
      errors.push(
        `${path}.code: duplicate coupon code ${
          JSON.stringify(coupon.code)
        } (codes are case-insensitive; first at $.coupons[${firstCode}])`
      )
    } else codes.set(code, i)
    if ((coupon.percent_off === undefined) === (coupon.amount_off === undefined)) {
      errors.push(`${path}: exactly one of percent_off and amount_off is required`)
    }
    if (coupon.amount_off !== undefined && coupon.currency !== currency) {
      errors.push(
        `${path}.currency: an amount_off coupon needs currency ${JSON.stringify(currency)} (the catalog currency)`
      )
    }
    if (coupon.start !== undefined && coupon.end !== undefined && Date.parse(coupon.start) >= Date.parse(coupon.end)) {
      errors.push(`${path}.end: must be after start`)
    }
  })
  return errors
}
