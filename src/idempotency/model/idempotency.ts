/** The pure rules of idempotent POSTs (CONTRACT §6): the key's scope, the body's fingerprint, what is kept. */
import { createHash, createHmac } from "node:crypto"
import { jsonDepthProblem } from "../../shared/json-depth.ts"

/** The path as a key's scope: percent-encoding made canonical, the one difference of spelling the router ignores. */
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

/** JSON text with keys sorted (UTF-16 code units) at every depth: bodies that parse to one value give one text. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
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

/** Canonical JSON of a body nested at most `MAX_JSON_DEPTH` deep (`canonicalJson` recurses), else its bytes. */
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

const VERSIONED_PREFIX = "hmac2:"

const hmac = (key: Uint8Array, text: string) => createHmac("sha256", key).update(text, "utf8").digest("hex")

/** HMAC-SHA256 under a server key (a body may hold a card number), with `apiVersion` if the answer is in its format. */
export const requestFingerprint = (body: string, key: Uint8Array, apiVersion?: string): string =>
  apiVersion === undefined
    ? KEYED_PREFIX + hmac(key, fingerprintInput(body))
    : VERSIONED_PREFIX + hmac(key, `version\0${apiVersion}\0${fingerprintInput(body)}`)

export interface FingerprintKeys {
  readonly current: Uint8Array
  readonly retired: ReadonlyArray<Uint8Array>
}

/** Whether `stored` is of `body` under any of `keys`, or unkeyed; an unversioned record matches on the body alone. */
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
 * Kept for replay: 2xx–4xx but 429, 401 (not executed) and 424 (a dependency failed: UCP's unreachable
 * agent profile); a 5xx releases the key so that a retry runs again.
 */
export const isReplayableStatus = (status: number): boolean =>
  status < 500 && status !== 429 && status !== 401 && status !== 424
