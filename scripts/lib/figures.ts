/** Summaries of repeated measurements (no side effects: any script may import it). */

/** The item whose `key` is the median (the lower middle one of an even count). */
export const medianOf = <A>(items: ReadonlyArray<A>, key: (item: A) => number): A =>
  [...items].sort((a, b) => key(a) - key(b))[Math.floor((items.length - 1) / 2)]!

/** The median of numbers (the lower middle one of an even count). */
export const median = (values: ReadonlyArray<number>): number => medianOf(values, (value) => value)

/** `median (min–max)` of figures, with `digits` decimals (one by default). */
export const medianWithRange = (values: ReadonlyArray<number>, digits = 1): string =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`
