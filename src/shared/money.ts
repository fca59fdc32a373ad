/**
 * Integer money arithmetic. Amounts are non-negative integers in minor units of the currency;
 * rates are integers in parts per million (ppm): 8.875 % = 88_750 ppm (see `taxRatePpm`).
 *
 * Why plain numbers are enough: every amount the schemas accept is at most `MAX_AMOUNT` (10^12),
 * a cart has at most `MAX_ITEMS` (100) lines of at most `MAX_QUANTITY` (10^4) units, so any sum
 * or product we form stays far below `Number.MAX_SAFE_INTEGER` (≈ 9·10^15) in every realistic
 * catalog. Rather than trusting that silently, each helper checks its inputs and its result and
 * throws a `RangeError` (a defect, never a business failure) if an amount ever leaves the exact
 * integer range. Only `roundHalfUp` needs more than 53 bits in between (10^12 × 10^6), so it
 * computes in `BigInt`.
 */

/** One whole in parts per million. */
export const PPM = 1_000_000

const PPM_BIG = BigInt(PPM)
const HALF_PPM_BIG = PPM_BIG / 2n

const requireAmount = (value: number, what: string): number => {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${what} must be a non-negative safe integer, got ${value}`)
  }
  return value
}

const toSafeNumber = (value: bigint, what: string): number => {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`${what} exceeds Number.MAX_SAFE_INTEGER: ${value}`)
  }
  return Number(value)
}

/**
 * `round_half_up(amount × ratePpm / 10^6)`, exact: 0.5 minor units and above round up.
 * E.g. `roundHalfUp(100, 5_000)` (100 × 0.5 %) = 1 (0.5 rounds up); `roundHalfUp(99, 5_000)` = 0.
 */
export const roundHalfUp = (amount: number, ratePpm: number): number => {
  const product = BigInt(requireAmount(amount, "amount")) * BigInt(requireAmount(ratePpm, "rate (ppm)"))
  return toSafeNumber((product + HALF_PPM_BIG) / PPM_BIG, "rounded amount")
}

/** `unit × quantity`, guarded: throws a `RangeError` if the product is not an exact integer. */
export const multiplyAmount = (unit: number, quantity: number): number =>
  toSafeNumber(
    BigInt(requireAmount(unit, "unit amount")) * BigInt(requireAmount(quantity, "quantity")),
    "amount × quantity"
  )

/** Σ amounts, guarded: every term and the result must be non-negative safe integers. */
export const sumAmounts = (amounts: Iterable<number>): number => {
  let total = 0
  for (const amount of amounts) {
    total += requireAmount(amount, "amount")
    requireAmount(total, "sum of amounts")
  }
  return total
}

/** `a − b` for amounts with `b <= a` (e.g. base amount minus its discount), guarded. */
export const subtractAmount = (a: number, b: number): number => {
  requireAmount(a, "minuend")
  requireAmount(b, "subtrahend")
  if (b > a) throw new RangeError(`cannot subtract ${b} from ${a}: the result would be negative`)
  return a - b
}

/** Minor units as money: `12.50 USD` (two decimals; the catalog's currencies all have two). */
export const formatAmount = (amount: number, currency: string): string =>
  `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`
