/**
 * Integer money: minor units, rates in ppm (8.875 % = 88_750 ppm), amounts at most `MAX_AMOUNT` (10^15). Each
 * helper throws a `RangeError` (a defect) off the non-negative safe integers; `roundHalfUp` computes in `BigInt`.
 */

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

/** `round_half_up(amount × ratePpm / 10^6)`, exact: `roundHalfUp(100, 5_000)` = 1, `roundHalfUp(99, 5_000)` = 0. */
export const roundHalfUp = (amount: number, ratePpm: number): number => {
  const product = BigInt(requireAmount(amount, "amount")) * BigInt(requireAmount(ratePpm, "rate (ppm)"))
  return toSafeNumber((product + HALF_PPM_BIG) / PPM_BIG, "rounded amount")
}

export const multiplyAmount = (unit: number, quantity: number): number =>
  toSafeNumber(
    BigInt(requireAmount(unit, "unit amount")) * BigInt(requireAmount(quantity, "quantity")),
    "amount × quantity"
  )

export const sumAmounts = (amounts: Iterable<number>): number => {
  let total = 0
  for (const amount of amounts) {
    total += requireAmount(amount, "amount")
    requireAmount(total, "sum of amounts")
  }
  return total
}

export const subtractAmount = (a: number, b: number): number => {
  requireAmount(a, "minuend")
  requireAmount(b, "subtrahend")
  if (b > a) throw new RangeError(`cannot subtract ${b} from ${a}: the result would be negative`)
  return a - b
}

/** Minor units as money: `12.50 USD` (two decimals; the catalog's currencies all have two). */
export const formatAmount = (amount: number, currency: string): string =>
  `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`

/**
 * Major units as typed in a form (`25`, `25.5`, `25.50`) → minor units, exactly: read as digits, never
 * as a float (`19.99` is 1999, not 1998.999…). Undefined for anything else: a sign, an exponent, more than
 * two decimals, more than ten integer digits, a comma, blank.
 */
export const parseDecimalAmount = (text: string): number | undefined => {
  const match = /^(\d{1,10})(?:\.(\d{1,2}))?$/.exec(text.trim())
  if (match === null) return undefined
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"))
}
