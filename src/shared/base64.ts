const base64Alphabet = /^[A-Za-z0-9+/]*={0,2}$/
const base64UrlAlphabet = /^[A-Za-z0-9_-]*={0,2}$/

/** Base64 (standard or URL-safe, padding optional) → bytes; `undefined` unless canonical: one value, one spelling. */
export const decodeBase64Strict = (input: string): Buffer | undefined => {
  const urlSafe = !base64Alphabet.test(input)
  if (urlSafe && !base64UrlAlphabet.test(input)) return undefined
  const bytes = Buffer.from(input, urlSafe ? "base64url" : "base64")
  const canonical = bytes.toString(urlSafe ? "base64url" : "base64").replace(/=+$/, "")
  return canonical === input.replace(/=+$/, "") ? bytes : undefined
}
