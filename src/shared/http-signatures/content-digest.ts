/**
 * `Content-Digest` (RFC 9530 §2): a Dictionary of hash algorithm → Byte Sequence of the digest of the raw
 * content bytes, exactly as sent (no JSON canonicalization). Only sha-256 and sha-512 are known: the other
 * registered algorithms are insecure (RFC 9530 §5) and, like unknown ones, are ignored.
 */
import { Either } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { HttpSignatureError } from "./errors.ts"
import * as SF from "./structured-fields.ts"

export type DigestAlgorithm = "sha-256" | "sha-512"

const nodeHash: { readonly [A in DigestAlgorithm]: string } = { "sha-256": "sha256", "sha-512": "sha512" }

const isDigestAlgorithm = (name: string): name is DigestAlgorithm => name === "sha-256" || name === "sha-512"

const toBytes = (body: Uint8Array | string): Uint8Array =>
  typeof body === "string" ? new Uint8Array(Buffer.from(body, "utf8")) : body

export const digestBytes = (algorithm: DigestAlgorithm, body: Uint8Array | string): Uint8Array =>
  new Uint8Array(createHash(nodeHash[algorithm]).update(toBytes(body)).digest())

/** The `Content-Digest` value for the body, e.g. `sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:`. */
export const contentDigest = (
  body: Uint8Array | string,
  algorithms: ReadonlyArray<DigestAlgorithm> = ["sha-256"]
): string =>
  algorithms.map((algorithm) => `${algorithm}=:${Buffer.from(digestBytes(algorithm, body)).toString("base64")}:`).join(
    ", "
  )

export interface VerifyDigestOptions {
  /** Algorithms that must be present (UCP: `["sha-256"]`); by default any one known algorithm suffices. */
  readonly required?: ReadonlyArray<DigestAlgorithm>
}

const mismatch = (reason: string) => Either.left(new HttpSignatureError({ code: "digest_mismatch", reason }))

/**
 * Checks a `Content-Digest` field value against the body: it must parse, carry at least one known algorithm
 * (and every required one), and every known digest present must match. Returns the algorithms checked.
 */
export const verifyContentDigest = (
  header: string | undefined,
  body: Uint8Array | string,
  options: VerifyDigestOptions = {}
): Either.Either<ReadonlyArray<DigestAlgorithm>, HttpSignatureError> => {
  if (header === undefined) return mismatch("no Content-Digest")
  const parsed = SF.parseDictionary(header)
  if (Either.isLeft(parsed)) return mismatch("Content-Digest is not a dictionary")
  const checked: Array<DigestAlgorithm> = []
  for (const [name, member] of parsed.right) {
    if (!isDigestAlgorithm(name)) continue
    if (member._tag !== "Item" || member.value._tag !== "ByteSequence") {
      return mismatch(`Content-Digest ${name} is not a byte sequence`)
    }
    const expected = digestBytes(name, body)
    const given = member.value.value
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return mismatch(`Content-Digest ${name} does not match the body`)
    }
    checked.push(name)
  }
  if (checked.length === 0) return mismatch("Content-Digest has no known algorithm")
  for (const algorithm of options.required ?? []) {
    if (!checked.includes(algorithm)) return mismatch(`Content-Digest has no ${algorithm}`)
  }
  return Either.right(checked)
}
