/**
 * What reads as a card number: 13–19 digits starting with 2–6, in groups split by single spaces or dashes,
 * Luhn-valid. A numeric id of that shape is one too, one time in ten: the price of never showing a card.
 */

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

const DIGIT_RUN = /\d(?:[ -]?\d)*/g
/** Thirteen digits in one run at least: text without them holds no card number (most text). */
const LONG_ENOUGH = /\d(?:[ -]?\d){12}/

const GROUP = /\d+/g

const readsAsCardNumber = (digits: string): boolean =>
  digits.length >= 13 && digits.length <= 19 && digits.charCodeAt(0) >= 50 && digits.charCodeAt(0) <= 54 &&
  luhnValid(digits)

/** Card numbers in a run as [start, end) offsets: whole groups, earliest and shortest first, none overlapping. */
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
