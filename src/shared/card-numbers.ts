/**
 * Card numbers: the Luhn check, and card numbers in text that is not meant for them.
 *
 * A card number in text is what reads as one: 13 to 19 digits, as they are written (together, or
 * in groups split by single spaces or dashes), starting with a card scheme's industry digit (2–6:
 * Mastercard's 2-series, American Express, JCB, Diners, Visa, Mastercard, Discover, UnionPay,
 * Maestro), with a valid Luhn check. Epoch-millisecond timestamps (13 digits from 1) and longer
 * runs of digits are not; a numeric id of that shape passes one time in ten, and is treated as a
 * card number: the price of never keeping or showing one.
 */

/** Luhn (mod 10) check of a digit string. */
export const luhnValid = (digits: string): boolean => {
  if (!/^[0-9]+$/.test(digits)) return false
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

/** A run of digits, with single spaces or dashes between them. */
const DIGIT_RUN = /\d(?:[ -]?\d)*/g
/** Thirteen digits in one run at least: text without them holds no card number (most text). */
const LONG_ENOUGH = /\d(?:[ -]?\d){12}/

/** A group of a run: digits between separators. */
const GROUP = /\d+/g

const readsAsCardNumber = (digits: string): boolean =>
  digits.length >= 13 && digits.length <= 19 && digits.charCodeAt(0) >= 50 && digits.charCodeAt(0) <= 54 &&
  luhnValid(digits)

/**
 * The card numbers in one run of digits, as [start, end) offsets in the run: whole groups only
 * (a number is not split inside a group), the earliest and shortest first, none overlapping.
 */
const cardNumbersInRun = (run: string): Array<readonly [number, number]> => {
  if (run.length < 13) return []
  const groups = Array.from(run.matchAll(GROUP), (m) => [m.index, m.index + m[0].length] as const)
  const found: Array<readonly [number, number]> = []
  let first = 0
  while (first < groups.length) {
    let digits = ""
    let last = first
    let match = -1
    for (; last < groups.length && digits.length < 19; last++) {
      digits += run.slice(groups[last]![0], groups[last]![1])
      if (readsAsCardNumber(digits)) {
        match = last
        break
      }
    }
    if (match < 0) {
      first++
    } else {
      found.push([groups[first]![0], groups[match]![1]])
      first = match + 1
    }
  }
  return found
}

/** Why a field that holds a card number is refused (after the field's name). */
export const MISPLACED_CARD_NUMBER =
  "holds what reads as a card number; a card number goes only in payment_method.number"

/** Whether `text` holds something that reads as a card number. */
export const containsCardNumber = (text: string): boolean => {
  if (!LONG_ENOUGH.test(text)) return false
  for (const run of text.matchAll(DIGIT_RUN)) if (cardNumbersInRun(run[0]).length > 0) return true
  return false
}

/** A card number shown as PCI DSS allows: its first 6 and last 4 digits, the others as `*`. */
const masked = (number: string): string => {
  const digits = number.replace(/[ -]/g, "")
  return digits.slice(0, 6) + "*".repeat(digits.length - 10) + digits.slice(-4)
}

/** `text` with everything that reads as a card number masked (`424242******4242`). */
export const maskCardNumbers = (text: string): string =>
  !LONG_ENOUGH.test(text) ? text : text.replace(DIGIT_RUN, (run) => {
    const numbers = cardNumbersInRun(run)
    if (numbers.length === 0) return run
    let out = ""
    let at = 0
    for (const [start, end] of numbers) {
      out += run.slice(at, start) + masked(run.slice(start, end))
      at = end
    }
    return out + run.slice(at)
  })
