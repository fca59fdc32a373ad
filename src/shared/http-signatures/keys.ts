/**
 * JSON Web Keys (RFC 7517) for message signatures. The algorithm comes from the key itself: EC `crv` P-256 →
 * ecdsa-p256-sha256 (JWS ES256), P-384 → ecdsa-p384-sha384 (ES384), OKP Ed25519 → ed25519; an RSA key names
 * its algorithm with `alg` (PS512, RS256) or the caller does; `oct` is hmac-sha256. A key that does not fit
 * is refused. Error messages never carry key material.
 */
import { Either } from "effect"
import * as crypto from "node:crypto"
import { keyMismatch, type SignatureAlgorithm, type SignatureKey } from "./algorithms.ts"
import { SignatureKeyError } from "./errors.ts"

export interface Jwk {
  readonly kty: string
  readonly kid?: string
  readonly use?: string
  readonly alg?: string
  readonly crv?: string
  readonly x?: string
  readonly y?: string
  readonly d?: string
  readonly n?: string
  readonly e?: string
  readonly k?: string
  readonly [member: string]: unknown
}

/** The JWS `alg` (RFC 7518) of each registry algorithm, for published keys. */
export const jwsAlgorithm: { readonly [A in SignatureAlgorithm]: string } = {
  "ecdsa-p256-sha256": "ES256",
  "ecdsa-p384-sha384": "ES384",
  "ed25519": "EdDSA",
  "rsa-pss-sha512": "PS512",
  "rsa-v1_5-sha256": "RS256",
  "hmac-sha256": "HS256"
}

const fail = (reason: string) => Either.left(new SignatureKeyError({ reason }))

/** The algorithm a JWK determines by itself, `undefined` when it leaves it open (RSA without `alg`). */
const algorithmOfJwk = (jwk: Jwk): Either.Either<SignatureAlgorithm | undefined, SignatureKeyError> => {
  const fromAlg = (table: { readonly [alg: string]: SignatureAlgorithm }, fallback?: SignatureAlgorithm) => {
    if (jwk.alg === undefined) return Either.right(fallback)
    const algorithm = table[jwk.alg]
    return algorithm === undefined ? fail(`alg ${jwk.alg} does not fit a ${jwk.kty} key`) : Either.right(algorithm)
  }
  switch (jwk.kty) {
    case "EC":
      if (jwk.crv === "P-256") return fromAlg({ ES256: "ecdsa-p256-sha256" }, "ecdsa-p256-sha256")
      if (jwk.crv === "P-384") return fromAlg({ ES384: "ecdsa-p384-sha384" }, "ecdsa-p384-sha384")
      return fail(`unsupported EC curve ${String(jwk.crv)}`)
    case "OKP":
      if (jwk.crv === "Ed25519") return fromAlg({ EdDSA: "ed25519", Ed25519: "ed25519" }, "ed25519")
      return fail(`unsupported OKP curve ${String(jwk.crv)}`)
    case "RSA":
      return fromAlg({ PS512: "rsa-pss-sha512", RS256: "rsa-v1_5-sha256" })
    case "oct":
      return fromAlg({ HS256: "hmac-sha256" }, "hmac-sha256")
    default:
      return fail(`unsupported key type ${String(jwk.kty)}`)
  }
}

const toKeyObject = (jwk: Jwk): crypto.KeyObject | undefined => {
  try {
    if (jwk.kty === "oct") {
      return typeof jwk.k === "string" ? crypto.createSecretKey(Buffer.from(jwk.k, "base64url")) : undefined
    }
    const input = { key: jwk as crypto.JsonWebKey, format: "jwk" as const }
    return jwk.d === undefined ? crypto.createPublicKey(input) : crypto.createPrivateKey(input)
  } catch {
    return undefined
  }
}

export interface ImportOptions {
  /** The algorithm the caller expects; required for an RSA key without `alg`, checked against all others. */
  readonly algorithm?: SignatureAlgorithm
}

/** A JWK (public, private or `oct`) as a key for its one algorithm; `kid` becomes the keyid. */
export const importJwk = (jwk: Jwk, options: ImportOptions = {}): Either.Either<SignatureKey, SignatureKeyError> => {
  if (typeof jwk !== "object" || jwk === null || typeof jwk.kty !== "string") return fail("not a JWK")
  if (jwk.use !== undefined && jwk.use !== "sig") return fail(`key use ${String(jwk.use)} is not sig`)
  const own = algorithmOfJwk(jwk)
  if (Either.isLeft(own)) return Either.left(own.left)
  if (own.right !== undefined && options.algorithm !== undefined && own.right !== options.algorithm) {
    return fail(`the key is for ${own.right}, not ${options.algorithm}`)
  }
  const algorithm = own.right ?? options.algorithm
  if (algorithm === undefined) return fail("the key does not say its algorithm")
  const key = toKeyObject(jwk)
  if (key === undefined) return fail(`the ${jwk.kty} JWK could not be imported`)
  return fromKeyObject(key, algorithm, jwk.kid)
}

/** A node:crypto key (from PEM, DER or a generator) for `algorithm`, refused when it does not fit. */
export const fromKeyObject = (
  key: crypto.KeyObject,
  algorithm: SignatureAlgorithm,
  keyid?: string
): Either.Either<SignatureKey, SignatureKeyError> => {
  const mismatch = keyMismatch(algorithm, key)
  if (mismatch !== undefined) return fail(mismatch)
  return Either.right(keyid === undefined ? { algorithm, key } : { algorithm, key, keyid })
}

/** The public half of a signing key (a secret key stays itself). */
export const publicKeyOf = (key: SignatureKey): SignatureKey =>
  key.key.type === "private" ? { ...key, key: crypto.createPublicKey(key.key) } : key

const PUBLIC_MEMBERS: { readonly [kty: string]: ReadonlyArray<string> } = {
  EC: ["kty", "crv", "x", "y"],
  OKP: ["kty", "crv", "x"],
  RSA: ["kty", "n", "e"]
}

/** The public JWK to publish (e.g. in UCP's `signing_keys`): `kid`, `use: "sig"` and the JWS `alg`. */
export const exportPublicJwk = (
  key: SignatureKey,
  kid: string | undefined = key.keyid
): Either.Either<Jwk, SignatureKeyError> => {
  if (key.algorithm === "hmac-sha256") return fail("a shared secret has no public key")
  const exported = publicKeyOf(key).key.export({ format: "jwk" }) as Jwk
  const members = PUBLIC_MEMBERS[exported.kty] ?? []
  const out: { [member: string]: unknown } = {}
  if (kid !== undefined) out.kid = kid
  for (const member of members) out[member] = exported[member]
  out.use = "sig"
  out.alg = jwsAlgorithm[key.algorithm]
  return Either.right(out as Jwk)
}

export interface GeneratedKeyPair {
  readonly privateJwk: Jwk
  readonly publicJwk: Jwk
}

/** A new EC key pair as JWKs (P-256 unless asked, as UCP recommends), both with `kid`, `use` and `alg`. */
export const generateEcKeyPair = (kid: string, curve: "P-256" | "P-384" = "P-256"): GeneratedKeyPair => {
  const { privateKey } = crypto.generateKeyPairSync("ec", { namedCurve: curve === "P-256" ? "P-256" : "P-384" })
  const alg = curve === "P-256" ? "ES256" : "ES384"
  const exported = privateKey.export({ format: "jwk" })
  const publicJwk: Jwk = { kid, kty: "EC", crv: curve, x: exported.x!, y: exported.y!, use: "sig", alg }
  return { privateJwk: { ...publicJwk, d: exported.d! }, publicJwk }
}
