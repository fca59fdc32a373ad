/** The errors of HTTP message signatures. Messages name what failed, never key material or signature bytes. */
import { Data } from "effect"

/** UCP's signature error codes (signatures.md, "Error Handling"); RFC 9421 leaves the codes to applications. */
export type SignatureErrorCode =
  | "signature_missing"
  | "signature_invalid"
  | "key_not_found"
  | "digest_mismatch"
  | "algorithm_unsupported"

export const signatureErrorStatus: { readonly [C in SignatureErrorCode]: 400 | 401 } = {
  signature_missing: 401,
  signature_invalid: 401,
  key_not_found: 401,
  digest_mismatch: 400,
  algorithm_unsupported: 400
}

/** A verification failure: `code` is for the wire, `reason` for logs. */
export class HttpSignatureError extends Data.TaggedError("HttpSignatureError")<{
  readonly code: SignatureErrorCode
  readonly reason: string
}> {
  get status(): 400 | 401 {
    return signatureErrorStatus[this.code]
  }
  override get message(): string {
    return `${this.code}: ${this.reason}`
  }
}

/** A covered component that cannot be derived from the message (RFC 9421 §2.5): signing fails, verifying is invalid. */
export class SignatureBaseError extends Data.TaggedError("SignatureBaseError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `signature base: ${this.reason}`
  }
}

/** A key that cannot be imported, or that does not fit the algorithm asked for. */
export class SignatureKeyError extends Data.TaggedError("SignatureKeyError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `signature key: ${this.reason}`
  }
}
