/** HMAC-SHA256 signatures over a timestamp and a raw body, checked in constant time against every secret. Pure. */
import { Data, Either } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

export type SignatureFailureReason = "missing" | "malformed" | "stale" | "future" | "mismatch"

/** Any signature problem (the APIs answer 401 `invalid_signature`); `reason` is for logs only. */
export class SignatureFailure extends Data.TaggedError("SignatureFailure")<{
  readonly reason: SignatureFailureReason
}> {
  override get message(): string {
    return `invalid signature (${this.reason})`
  }
}

const toBytes = (body: string | Uint8Array): Buffer =>
  typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength)

export const hmacSha256 = (secret: string, prefix: string, rawBody: string | Uint8Array): Buffer =>
  createHmac("sha256", secret).update(prefix, "utf8").update(toBytes(rawBody)).digest()

export const signPayload = (secret: string, timestampSeconds: number, rawBody: string | Uint8Array): string => {
  const t = String(Math.trunc(timestampSeconds))
  return `t=${t},v1=${hmacSha256(secret, `${t}.`, rawBody).toString("hex")}`
}

export interface ParsedSignatureHeader {
  readonly timestamp: number
  /** Lowercase hex, 64 characters each (several during secret rotation). */
  readonly signatures: ReadonlyArray<string>
}

/** Parses `t=…,v1=…[,v1=…]`, ignoring spaces, empty parts and unknown schemes (`v0=`). */
export const parseSignatureHeader = (header: string): Either.Either<ParsedSignatureHeader, SignatureFailure> => {
  // Built only when needed: an error captures a stack trace, and most headers are well formed.
  const malformed = () => Either.left(new SignatureFailure({ reason: "malformed" }))
  if (header.length > 4096) return malformed()
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const rawPart of header.split(",")) {
    const part = rawPart.trim()
    if (part === "") continue
    const eq = part.indexOf("=")
    if (eq <= 0) return malformed()
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t") {
      if (timestamp !== undefined || !/^\d{1,15}$/.test(value)) return malformed()
      timestamp = Number(value)
    } else if (key === "v1") {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return malformed()
      signatures.push(value.toLowerCase())
    }
  }
  if (timestamp === undefined || signatures.length === 0) return malformed()
  return Either.right({ timestamp, signatures })
}

/** A timestamp more than `toleranceSeconds` away from now (exactly ±tolerance is accepted). */
export const checkTimestampWindow = (
  timestampSeconds: number,
  nowSeconds: number,
  toleranceSeconds: number
): SignatureFailure | undefined =>
  nowSeconds - timestampSeconds > toleranceSeconds
    ? new SignatureFailure({ reason: "stale" })
    : timestampSeconds - nowSeconds > toleranceSeconds
    ? new SignatureFailure({ reason: "future" })
    : undefined

/** The index of the first secret whose MAC a candidate matches; compares all, never stopping early. */
export const matchSecrets = (candidates: ReadonlyArray<Buffer>, expected: ReadonlyArray<Buffer>): number => {
  let found = -1
  for (let i = 0; i < expected.length; i++) {
    const mac = expected[i]!
    let hit = false
    for (const candidate of candidates) {
      const same = candidate.length === mac.length && timingSafeEqual(candidate, mac)
      hit = hit || same
    }
    if (hit && found === -1) found = i
  }
  return found
}

export interface VerifySignatureInput {
  readonly header: string | null | undefined
  readonly rawBody: string | Uint8Array
  readonly secrets: ReadonlyArray<string>
  readonly nowSeconds: number
  readonly toleranceSeconds: number
}

/** Verifies a `t=…,v1=…` header (order events' `Merchant-Signature`): missing, malformed, window, then HMAC. */
export const verifySignature = (
  input: VerifySignatureInput
): Either.Either<{ readonly secretIndex: number }, SignatureFailure> => {
  if (input.header === undefined || input.header === null || input.header.trim() === "") {
    return Either.left(new SignatureFailure({ reason: "missing" }))
  }
  const parsed = parseSignatureHeader(input.header)
  if (Either.isLeft(parsed)) return Either.left(parsed.left)
  const { signatures, timestamp } = parsed.right
  const outside = checkTimestampWindow(timestamp, input.nowSeconds, input.toleranceSeconds)
  if (outside) return Either.left(outside)
  const prefix = `${timestamp}.`
  const expected = input.secrets.map((secret) => hmacSha256(secret, prefix, input.rawBody))
  const index = matchSecrets(
    signatures.map((hex) => Buffer.from(hex, "hex")),
    expected
  )
  return index >= 0 ? Either.right({ secretIndex: index }) : Either.left(new SignatureFailure({ reason: "mismatch" }))
}
