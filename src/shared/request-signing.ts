/** Request signing of the checkout and delegate APIs (CONTRACT §3): `Signature` over `Timestamp` and body, ±300 s. */
import { Either } from "effect"
import { checkTimestampWindow, hmacSha256, matchSecrets, SignatureFailure } from "./hmac-signature.ts"

/** base64url (no padding) HMAC-SHA256 over `timestamp + "." + rawBody`, timestamp exactly as sent. */
export const signRequest = (secret: string, timestamp: string, rawBody: string | Uint8Array): string =>
  hmacSha256(secret, `${timestamp}.`, rawBody).toString("base64url")

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/

export const parseRequestTimestamp = (value: string): number | undefined => {
  const v = value.trim()
  if (/^\d{1,15}$/.test(v)) return Number(v)
  if (!RFC3339.test(v)) return undefined
  const ms = Date.parse(v.replace(" ", "T"))
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined
}

export interface VerifyRequestSignatureInput {
  readonly signature: string | null | undefined
  readonly timestamp: string | null | undefined
  readonly rawBody: string | Uint8Array
  readonly secrets: ReadonlyArray<string>
  readonly nowSeconds: number
  readonly toleranceSeconds?: number
}

/** Verifies `Signature`/`Timestamp`; a signature is base64url or base64, padded or not, of 32 bytes. */
export const verifyRequestSignature = (
  input: VerifyRequestSignatureInput
): Either.Either<{ readonly secretIndex: number }, SignatureFailure> => {
  const signature = input.signature?.trim() ?? ""
  const timestamp = input.timestamp?.trim() ?? ""
  if (signature === "" || timestamp === "") return Either.left(new SignatureFailure({ reason: "missing" }))
  const seconds = parseRequestTimestamp(timestamp)
  if (seconds === undefined || !/^[A-Za-z0-9_\-+/]{42,44}={0,2}$/.test(signature)) {
    return Either.left(new SignatureFailure({ reason: "malformed" }))
  }
  const candidate = Buffer.from(signature.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""), "base64url")
  if (candidate.length !== 32) return Either.left(new SignatureFailure({ reason: "malformed" }))
  const outside = checkTimestampWindow(seconds, input.nowSeconds, input.toleranceSeconds ?? 300)
  if (outside) return Either.left(outside)
  const prefix = `${timestamp}.`
  const index = matchSecrets(
    [candidate],
    input.secrets.map((secret) => hmacSha256(secret, prefix, input.rawBody))
  )
  return index >= 0 ? Either.right({ secretIndex: index }) : Either.left(new SignatureFailure({ reason: "mismatch" }))
}
