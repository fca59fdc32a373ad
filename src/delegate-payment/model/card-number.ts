/** The brand a card number's (or an IIN's) leading digits name; the Luhn check is `src/shared/card-numbers.ts`. */

export type CardBrand = "visa" | "mastercard" | "amex" | "discover" | "unknown"

const brandPrefixes: ReadonlyArray<readonly [CardBrand, RegExp]> = [
  ["amex", /^3[47]/],
  ["visa", /^4/],
  ["mastercard", /^(5[1-5]|222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)/],
  ["discover", /^(6011|64[4-9]|65|622(12[6-9]|1[3-9][0-9]|[2-8][0-9]{2}|9[01][0-9]|92[0-5]))/]
]

export const detectCardBrand = (number: string): CardBrand => {
  for (const [brand, prefix] of brandPrefixes) if (prefix.test(number)) return brand
  return "unknown"
}
