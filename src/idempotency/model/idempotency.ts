/**
 * The pure rules of idempotent POSTs (CONTRACT §6): how a request body is fingerprinted, and which
 * results are kept for replay. Which keys are acceptable: `src/platform/http/idempotency-key.ts`.
 */
import { createHash, createHmac } from "node:crypto"
import { jsonDepthProblem } from "../../shared/json-depth.ts"

/**
 * The path of a request as the scope of its key: each segment's percent-encoding made canonical
 * (`delegate%5Fpayment` and `delegate_payment` are one route to the router, so one scope here).
 * Case, trailing and doubled slashes need nothing: the router takes only the exact spelling.
 */
export const canonicalPath = (path: string): string =>
  path.includes("%")
    ? path.split("/").map((segment) => {
      try {
        return encodeURIComponent(decodeURIComponent(segment))
      } catch {
        return segment
      }
    }).join("/")
    : path

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
 * The text a fingerprint is taken over: canonical JSON when the body is JSON nested at most
 * `MAX_JSON_DEPTH` levels deep (so the recursive `canonicalJson` stays far inside the stack), else
 * its bytes (the route refuses such a body with a 400, stored for replay under this fingerprint).
 */
const fingerprintInput = (body: string): string => {
  if (body.trim() !== "") {
    let json: unknown
    try {
      json = JSON.parse(body)
    } catch {
      return `raw\0${body}`
    }
    if (jsonDepthProblem(json) === undefined) return `json\0${canonicalJson(json)}`
  }
  return `raw\0${body}`
}

/** Marks a keyed fingerprint; unmarked hex is the unkeyed SHA-256 of earlier versions. */
const KEYED_PREFIX = "hmac1:"

/** Marks a keyed fingerprint of a body together with the API version it was sent under. */
const VERSIONED_PREFIX = "hmac2:"

const hmac = (key: Uint8Array, text: string) => createHmac("sha256", key).update(text, "utf8").digest("hex")

/**
 * The fingerprint of a request body: HMAC-SHA256 under `key` (a server secret: the
 * `requestFingerprintKey` derived from VAULT_KEY) over its canonical JSON when the body is JSON, else over its
 * bytes; the two cases are domain-separated, so raw text never collides with the canonical form of
 * some JSON body. Keyed because a body can hold a card number and CVC (the delegate route): a plain
 * hash of it, stored next to the token it produced, could be brute-forced back to the card. Only
 * this fingerprint is stored, never the body.
 *
 * With `apiVersion` (routes whose wire format follows the request's version), the version is part
 * of what is fingerprinted: the stored response is in that version's format, so the same key and
 * body under another version is another request (a conflict), never a replay in the wrong format.
 */
export const requestFingerprint = (body: string, key: Uint8Array, apiVersion?: string): string =>
  apiVersion === undefined
    ? KEYED_PREFIX + hmac(key, fingerprintInput(body))
    : VERSIONED_PREFIX + hmac(key, `version\0${apiVersion}\0${fingerprintInput(body)}`)

/** The key fingerprints are made with, and the keys of earlier `VAULT_KEY`s still recognized. */
export interface FingerprintKeys {
  readonly current: Uint8Array
  readonly retired: ReadonlyArray<Uint8Array>
}

/**
 * Whether a stored fingerprint is of `body` (sent under `apiVersion`, on routes that fingerprint
 * it): under the current key, an earlier key (a `VAULT_KEY` rotation inside the TTL), or unkeyed
 * (records stored before fingerprints were keyed). A record stored before versions were
 * fingerprinted matches on the body alone; one stored with a version never matches a request
 * fingerprinted without one, and the reverse.
 */
export const fingerprintMatches = (
  stored: string,
  body: string,
  keys: FingerprintKeys,
  apiVersion?: string
): boolean => {
  const anyKey = (version: string | undefined) =>
    [keys.current, ...keys.retired].some((key) => stored === requestFingerprint(body, key, version))
  if (stored.startsWith(VERSIONED_PREFIX)) return apiVersion !== undefined && anyKey(apiVersion)
  if (stored.startsWith(KEYED_PREFIX)) return anyKey(undefined)
  return stored === createHash("sha256").update(fingerprintInput(body), "utf8").digest("hex")
}

/**
 * Whether a result is kept for replay. Kept: 2xx, 3xx and 4xx, which are the answer to this exact
 * request. Not kept (the key is released, so a retry runs again): 5xx (the server failed, the
 * retry may succeed), 429 (rate limited: the request was not executed) and 401 (authentication or
 * request signature refused: the request was not executed).
 */
export const isReplayableStatus = (status: number): boolean => status < 500 && status !== 429 && status !== 401
