/** The discount extension (CONTRACT §9): its wire objects and the stacking rules of `docs/discounts.md`. */
import { Schema } from "effect"
import { type CatalogCoupon, MAX_DISCOUNT_CODE_LENGTH, normalizeCode } from "../../catalog/model/coupons.ts"
import { roundHalfUp } from "../../shared/money.ts"
import { Amount, CurrencyCode, JsonPath, optional, Timestamp } from "../../shared/schema-helpers.ts"

export const DISCOUNT_EXTENSION_NAME = "dev.proto.discount"
export const MAX_DISCOUNT_CODES = 10

export const DISCOUNT_EXTENSION = {
  name: DISCOUNT_EXTENSION_NAME,
  extends: [
    "$.CheckoutSessionCreateRequest.discounts",
    "$.CheckoutSessionUpdateRequest.discounts",
    "$.CheckoutSession.discounts"
  ],
  schema: "https://acp.dev/extensions/dev.proto.discount/2026-01-30/schema.json",
  spec: "https://acp.dev/extensions/dev.proto.discount/2026-01-30"
} as const

export const Coupon = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  percent_off: optional(Schema.Number),
  amount_off: optional(Amount),
  currency: optional(CurrencyCode),
  duration: Schema.Literal("once"),
  max_redemptions: optional(Schema.Int),
  metadata: optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}).annotations({ identifier: "Coupon" })
export type Coupon = typeof Coupon.Type

export const DiscountAllocation = Schema.Struct({
  path: JsonPath,
  amount: Amount
}).annotations({ identifier: "DiscountAllocation" })
export type DiscountAllocation = typeof DiscountAllocation.Type

export const AppliedDiscount = Schema.Struct({
  id: Schema.String,
  code: Schema.String,
  coupon: Coupon,
  amount: Amount,
  automatic: Schema.Boolean,
  start: optional(Timestamp),
  end: optional(Timestamp),
  method: Schema.Literal("across"),
  priority: Schema.Int,
  allocations: Schema.Array(DiscountAllocation)
}).annotations({ identifier: "AppliedDiscount" })
export type AppliedDiscount = typeof AppliedDiscount.Type

export const RejectionReason = Schema.Literal(
  "discount_code_invalid",
  "discount_code_expired",
  "discount_code_usage_limit_reached",
  "discount_code_minimum_not_met",
  "discount_code_already_applied"
)
export type RejectionReason = typeof RejectionReason.Type

export const RejectedDiscount = Schema.Struct({
  code: Schema.String,
  reason: RejectionReason,
  message: Schema.String
}).annotations({ identifier: "RejectedDiscount" })
export type RejectedDiscount = typeof RejectedDiscount.Type

export const Discounts = Schema.Struct({
  codes: Schema.Array(Schema.String),
  applied: Schema.Array(AppliedDiscount),
  rejected: Schema.Array(RejectedDiscount)
}).annotations({ identifier: "Discounts" })
export type Discounts = typeof Discounts.Type

/** `discounts` of create and update requests: the codes replace the previous list; `[]` clears it. */
export const DiscountsRequest = Schema.Struct({
  codes: Schema.Array(
    Schema.String.pipe(
      Schema.filter((s) => s.trim().length > 0, { message: () => "must be a non-empty discount code" }),
      Schema.maxLength(MAX_DISCOUNT_CODE_LENGTH, {
        message: () => `must be at most ${MAX_DISCOUNT_CODE_LENGTH} characters`
      })
    )
  ).pipe(Schema.maxItems(MAX_DISCOUNT_CODES, { message: () => `must contain at most ${MAX_DISCOUNT_CODES} codes` }))
}).annotations({ identifier: "DiscountsRequest" })
export type DiscountsRequest = typeof DiscountsRequest.Type

export interface DiscountInput {
  readonly coupons: ReadonlyArray<CatalogCoupon>
  readonly codes: ReadonlyArray<string>
  /** Base amount of each line, in line order. */
  readonly lineBases: ReadonlyArray<number>
  /** Epoch ms. */
  readonly now: number
  /** Stored count plus other sessions' live holds; an absent coupon counts its catalog `times_redeemed`. */
  readonly redemptions?: ReadonlyMap<string, number> | undefined
}

export interface DiscountResult {
  readonly applied: ReadonlyArray<AppliedDiscount>
  /** With the index of the code in `codes`. */
  readonly rejected: ReadonlyArray<RejectedDiscount & { readonly index: number }>
  readonly lineDiscounts: ReadonlyArray<number>
}

const kindOf = (
  coupon: CatalogCoupon
): "percent" | "amount" => (coupon.percent_off !== undefined ? "percent" : "amount")

/** `undefined` when `coupon` can apply at `now`, the kind rule aside. */
export const ineligibility = (
  coupon: CatalogCoupon,
  itemsBase: number,
  now: number,
  redemptions: ReadonlyMap<string, number> | undefined
): { readonly reason: RejectionReason; readonly message: string } | undefined => {
  if (coupon.start !== undefined && now < Date.parse(coupon.start)) {
    return { reason: "discount_code_invalid", message: `Code ${coupon.code} is not active yet.` }
  }
  if (coupon.end !== undefined && now >= Date.parse(coupon.end)) {
    return { reason: "discount_code_expired", message: `Code ${coupon.code} has expired.` }
  }
  const used = redemptions?.get(coupon.id) ?? coupon.times_redeemed ?? 0
  if (coupon.max_redemptions !== undefined && used >= coupon.max_redemptions) {
    return { reason: "discount_code_usage_limit_reached", message: `Code ${coupon.code} has reached its usage limit.` }
  }
  if (coupon.minimum_subtotal !== undefined && itemsBase < coupon.minimum_subtotal) {
    return {
      reason: "discount_code_minimum_not_met",
      message:
        `Code ${coupon.code} needs items worth at least ${coupon.minimum_subtotal} (minor units) before discounts.`
    }
  }
  return undefined
}

/**
 * Largest remainder, ties to the lower index, exact in BigInt: the shares sum to `amount`, and with
 * `amount ≤ Σw` none exceeds its weight. All weights 0 give all shares 0.
 */
export const allocateProportionally = (amount: number, weights: ReadonlyArray<number>): ReadonlyArray<number> => {
  const total = weights.reduce((sum, w) => sum + BigInt(w), 0n)
  if (total === 0n || amount === 0) return weights.map(() => 0)
  const a = BigInt(amount)
  const shares = weights.map((w) => (a * BigInt(w)) / total)
  const remainders = weights.map((w, index) => ({ index, rest: (a * BigInt(w)) % total }))
  let left = a - shares.reduce((sum, s) => sum + s, 0n)
  remainders.sort((x, y) => (x.rest === y.rest ? x.index - y.index : x.rest > y.rest ? -1 : 1))
  for (const { index } of remainders) {
    if (left <= 0n) break
    shares[index] = (shares[index] ?? 0n) + 1n
    left--
  }
  return shares.map(Number)
}

const couponWire = (coupon: CatalogCoupon): Coupon => ({
  id: coupon.id,
  name: coupon.name,
  ...(coupon.percent_off !== undefined ? { percent_off: coupon.percent_off } : {}),
  ...(coupon.amount_off !== undefined ? { amount_off: coupon.amount_off } : {}),
  ...(coupon.currency !== undefined ? { currency: coupon.currency } : {}),
  duration: coupon.duration ?? "once",
  ...(coupon.max_redemptions !== undefined ? { max_redemptions: coupon.max_redemptions } : {}),
  ...(coupon.metadata !== undefined ? { metadata: coupon.metadata } : {})
})

/** Those whose redemptions matter. */
export const relevantCoupons = (
  coupons: ReadonlyArray<CatalogCoupon>,
  codes: ReadonlyArray<string>
): ReadonlyArray<CatalogCoupon> => {
  const wanted = new Set(codes.map(normalizeCode))
  return coupons.filter((coupon) => coupon.automatic === true || wanted.has(normalizeCode(coupon.code)))
}

export const evaluateDiscounts = (input: DiscountInput): DiscountResult => {
  const byCode = new Map(input.coupons.map((coupon) => [normalizeCode(coupon.code), coupon]))
  const itemsBase = input.lineBases.reduce((sum, base) => sum + base, 0)
  const chosen: Array<{ coupon: CatalogCoupon; automatic: boolean }> = []
  const taken = new Map<"percent" | "amount", CatalogCoupon>()
  const rejected: Array<RejectedDiscount & { readonly index: number }> = []
  const seen = new Set<string>()

  input.codes.forEach((code, index) => {
    const normalized = normalizeCode(code)
    const reject = (reason: RejectionReason, message: string) => rejected.push({ index, code, reason, message })
    if (seen.has(normalized)) return reject("discount_code_already_applied", `Code ${code} is already on this session.`)
    seen.add(normalized)
    const coupon = byCode.get(normalized)
    if (coupon === undefined) return reject("discount_code_invalid", `Code ${code} is not a valid discount code.`)
    const why = ineligibility(coupon, itemsBase, input.now, input.redemptions)
    if (why !== undefined) return reject(why.reason, why.message)
    const other = taken.get(kindOf(coupon))
    if (other !== undefined) {
      return reject(
        "discount_code_already_applied",
        `A ${kindOf(coupon)}-off discount (${other.code}) is already applied; only one per session.`
      )
    }
    taken.set(kindOf(coupon), coupon)
    chosen.push({ coupon, automatic: false })
  })
  for (const coupon of input.coupons) {
    if (coupon.automatic !== true || taken.has(kindOf(coupon))) continue
    if (chosen.some((c) => c.coupon.id === coupon.id)) continue
    if (ineligibility(coupon, itemsBase, input.now, input.redemptions) !== undefined) continue
    taken.set(kindOf(coupon), coupon)
    chosen.push({ coupon, automatic: true })
  }

  const ordered = [...chosen].sort((
    a,
    b
  ) => (kindOf(a.coupon) === kindOf(b.coupon) ? 0 : kindOf(a.coupon) === "percent" ? -1 : 1))
  const remaining = [...input.lineBases]
  const applied: Array<AppliedDiscount> = []
  ordered.forEach(({ automatic, coupon }, position) => {
    const left = remaining.reduce((sum, r) => sum + r, 0)
    const amount = coupon.percent_off !== undefined
      ? Math.min(left, roundHalfUp(itemsBase, Math.round(coupon.percent_off * 10_000)))
      : Math.min(left, coupon.amount_off ?? 0)
    const shares = allocateProportionally(amount, remaining)
    shares.forEach((share, i) => {
      remaining[i] = (remaining[i] ?? 0) - share
    })
    applied.push({
      id: `dsc_${coupon.id}`,
      code: coupon.code,
      coupon: couponWire(coupon),
      amount,
      automatic,
      ...(coupon.start !== undefined ? { start: new Date(Date.parse(coupon.start)).toISOString() } : {}),
      ...(coupon.end !== undefined ? { end: new Date(Date.parse(coupon.end)).toISOString() } : {}),
      method: "across",
      priority: position + 1,
      allocations: shares.flatMap((share, i) => (share > 0 ? [{ path: `$.line_items[${i}]`, amount: share }] : []))
    })
  })
  return {
    applied,
    rejected,
    lineDiscounts: input.lineBases.map((base, i) => base - (remaining[i] ?? 0))
  }
}
