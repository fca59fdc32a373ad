/**
 * The HTTP Signature Algorithms registry of RFC 9421 (§3.3, §6.2.2) over node:crypto: which keys fit which
 * algorithm, and the HTTP_SIGN / HTTP_VERIFY primitives. ECDSA values are raw fixed-width r||s
 * (`ieee-p1363`), never DER; a value of any other length is refused before the curve is asked.
 */
import { Either } from "effect"
import * as crypto from "node:crypto"
import { SignatureKeyError } from "./errors.ts"

export type SignatureAlgorithm =
  | "ecdsa-p256-sha256"
  | "ecdsa-p384-sha384"
  | "ed25519"
  | "rsa-pss-sha512"
  | "rsa-v1_5-sha256"
  | "hmac-sha256"

export const signatureAlgorithms: ReadonlyArray<SignatureAlgorithm> = [
  "ecdsa-p256-sha256",
  "ecdsa-p384-sha384",
  "ed25519",
  "rsa-pss-sha512",
  "rsa-v1_5-sha256",
  "hmac-sha256"
]

export const isSignatureAlgorithm = (name: string): name is SignatureAlgorithm =>
  (signatureAlgorithms as ReadonlyArray<string>).includes(name)

/** A key with the one algorithm it is used with; `key` is private or secret to sign, public or secret to verify. */
export interface SignatureKey {
  readonly algorithm: SignatureAlgorithm
  readonly key: crypto.KeyObject
  readonly keyid?: string
}

/** Below these sizes a key is refused: 2048-bit RSA (RFC 9421's test keys), 256-bit HMAC secrets. */
const MIN_RSA_BITS = 2048
const MIN_HMAC_BYTES = 32

/** Why `key` cannot be used with `algorithm`, or `undefined` when it fits. */
export const keyMismatch = (algorithm: SignatureAlgorithm, key: crypto.KeyObject): string | undefined => {
  if (algorithm === "hmac-sha256") {
    if (key.type !== "secret") return "hmac-sha256 needs a secret key"
    return (key.symmetricKeySize ?? 0) < MIN_HMAC_BYTES
      ? `hmac-sha256 needs at least ${MIN_HMAC_BYTES} bytes`
      : undefined
  }
  if (key.type === "secret") return `${algorithm} needs an asymmetric key`
  const type = key.asymmetricKeyType
  const details = key.asymmetricKeyDetails ?? {}
  switch (algorithm) {
    case "ecdsa-p256-sha256":
      return type === "ec" && details.namedCurve === "prime256v1" ? undefined : `${algorithm} needs a P-256 key`
    case "ecdsa-p384-sha384":
      return type === "ec" && details.namedCurve === "secp384r1" ? undefined : `${algorithm} needs a P-384 key`
    case "ed25519":
      return type === "ed25519" ? undefined : `${algorithm} needs an Ed25519 key`
    case "rsa-pss-sha512":
    case "rsa-v1_5-sha256": {
      // An "rsa-pss" key (RSASSA-PSS OID) may only make PSS signatures, with the hash its parameters name.
      const pssOnly = type === "rsa-pss"
      if (type !== "rsa" && !(pssOnly && algorithm === "rsa-pss-sha512")) return `${algorithm} needs an RSA key`
      if (pssOnly && details.hashAlgorithm !== undefined && details.hashAlgorithm !== "sha512") {
        return "the RSA-PSS key is restricted to another hash"
      }
      return (details.modulusLength ?? 0) < MIN_RSA_BITS
        ? `${algorithm} needs at least ${MIN_RSA_BITS} bits`
        : undefined
    }
  }
}

/** The exact signature length of the algorithm with this key. */
const signatureLength = (algorithm: SignatureAlgorithm, key: crypto.KeyObject): number => {
  switch (algorithm) {
    case "ecdsa-p256-sha256":
      return 64
    case "ecdsa-p384-sha384":
      return 96
    case "ed25519":
      return 64
    case "hmac-sha256":
      return 32
    case "rsa-pss-sha512":
    case "rsa-v1_5-sha256":
      return Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8)
  }
}

type NodeSignKey = crypto.KeyObject | crypto.SignKeyObjectInput | crypto.VerifyKeyObjectInput

const nodeParams = (
  algorithm: Exclude<SignatureAlgorithm, "hmac-sha256">,
  key: crypto.KeyObject
): readonly [string | null, NodeSignKey] => {
  switch (algorithm) {
    case "ecdsa-p256-sha256":
      return ["sha256", { key, dsaEncoding: "ieee-p1363" }]
    case "ecdsa-p384-sha384":
      return ["sha384", { key, dsaEncoding: "ieee-p1363" }]
    case "ed25519":
      return [null, key]
    case "rsa-pss-sha512":
      return ["sha512", { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }]
    case "rsa-v1_5-sha256":
      return ["sha256", { key, padding: crypto.constants.RSA_PKCS1_PADDING }]
  }
}

const hmac = (key: crypto.KeyObject, data: Uint8Array): Buffer => crypto.createHmac("sha256", key).update(data).digest()

/** HTTP_SIGN: the signature of `data` (the signature base's bytes) with a private or secret key. */
export const signBytes = (key: SignatureKey, data: Uint8Array): Either.Either<Uint8Array, SignatureKeyError> => {
  const mismatch = keyMismatch(key.algorithm, key.key)
  if (mismatch !== undefined) return Either.left(new SignatureKeyError({ reason: mismatch }))
  if (key.algorithm === "hmac-sha256") return Either.right(new Uint8Array(hmac(key.key, data)))
  if (key.key.type !== "private") return Either.left(new SignatureKeyError({ reason: "signing needs a private key" }))
  const [hash, params] = nodeParams(key.algorithm, key.key)
  try {
    return Either.right(new Uint8Array(crypto.sign(hash, data, params as crypto.SignKeyObjectInput)))
  } catch {
    return Either.left(new SignatureKeyError({ reason: `${key.algorithm} signing failed` }))
  }
}

/** HTTP_VERIFY: whether `signature` is valid for `data`; a value of the wrong length is simply invalid. */
export const verifyBytes = (key: SignatureKey, data: Uint8Array, signature: Uint8Array): boolean => {
  if (keyMismatch(key.algorithm, key.key) !== undefined) return false
  if (signature.length !== signatureLength(key.algorithm, key.key)) return false
  if (key.algorithm === "hmac-sha256") return crypto.timingSafeEqual(hmac(key.key, data), signature)
  try {
    const publicKey = key.key.type === "private" ? crypto.createPublicKey(key.key) : key.key
    const [hash, params] = nodeParams(key.algorithm, publicKey)
    return crypto.verify(hash, data, params as crypto.VerifyKeyObjectInput, signature)
  } catch {
    return false
  }
}
