/**
 * The pure rules of idempotent POSTs (CONTRACT §6): which keys are acceptable, how a request body
 * is fingerprinted, and which results are kept for replay.
 */
import { createHash } from "node:crypto"

/** 1–255 printable ASCII characters (space excluded), so a key is always safe to echo in a header. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

export const isValidIdempotencyKey = (value: string): boolean => IDEMPOTENCY_KEY_PATTERN.test(value)

/**
 * JSON text with object keys sorted (by UTF-16 code units) at every depth, arrays in their order,
 * no insignificant whitespace. Two bodies that parse to the same JSON value give the same text;
 * `null` and an absent key differ, as do `1` and `"1"`. Numbers are written as JavaScript writes
 * them, so `1.0` and `1` (the same parsed number) are equal.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    // JSON.parse only yields strings, finite numbers, booleans and null here.
    return JSON.stringify(value) ?? "null"
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  const record = value as Record<string, unknown>
  // Written out directly rather than rebuilt as an object, so keys like "__proto__" stay data.
  const entries = Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
  return `{${entries.join(",")}}`
}

/**
 * The fingerprint of a request body: SHA-256 (hex) over its canonical JSON when the body is JSON,
 * else over its bytes. The two cases are domain-separated, so raw text can never collide with the
 * canonical form of some JSON body. Only this hash is stored, never the body.
 */
export const requestFingerprint = (body: string): string => {
  let canonical: string | undefined
  if (body.trim() !== "") {
    try {
      canonical = canonicalJson(JSON.parse(body))
    } catch {
      canonical = undefined
    }
  }
  const hash = createHash("sha256")
  if (canonical !== undefined) hash.update("json\0").update(canonical, "utf8")
  else hash.update("raw\0").update(body, "utf8")
  return hash.digest("hex")
}

/**
 * Whether a result is kept for replay. Kept: 2xx, 3xx and 4xx, which are the answer to this exact
 * request. Not kept (the key is released, so a retry runs again): 5xx (the server failed, the
 * retry may succeed), 429 (rate limited: the request was not executed) and 401 (authentication or
 * request signature refused: the request was not executed).
 */
export const isReplayableStatus = (status: number): boolean =>
  status < 500 && status !== 429 && status !== 401
