import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { createSecretKey, generateKeyPairSync } from "node:crypto"
import { signBytes, verifyBytes } from "../../../src/shared/http-signatures/algorithms.ts"
import {
  exportPublicJwk,
  fromKeyObject,
  generateEcKeyPair,
  importJwk,
  type Jwk,
  publicKeyOf
} from "../../../src/shared/http-signatures/keys.ts"
import * as V from "./rfc9421-vectors.ts"

const reason = <A>(result: Either.Either<A, { readonly message: string }>) =>
  Either.isLeft(result) ? result.left.message : "ok"

describe("importJwk", () => {
  it("derives the algorithm from the key: EC crv, OKP Ed25519, oct", () => {
    expect(Either.getOrThrow(importJwk(V.testKeyEccP256)).algorithm).toBe("ecdsa-p256-sha256")
    expect(Either.getOrThrow(importJwk(V.testKeyEd25519)).algorithm).toBe("ed25519")
    const p384 = generateEcKeyPair("k384", "P-384")
    expect(Either.getOrThrow(importJwk(p384.publicJwk)).algorithm).toBe("ecdsa-p384-sha384")
    const oct: Jwk = { kty: "oct", k: Buffer.from(V.testSharedSecret, "base64").toString("base64url") }
    expect(Either.getOrThrow(importJwk(oct)).algorithm).toBe("hmac-sha256")
  })

  it("keeps the kid as the keyid and tells a private key from a public one", () => {
    const priv = Either.getOrThrow(importJwk(V.testKeyEccP256))
    expect(priv.keyid).toBe("test-key-ecc-p256")
    expect(priv.key.type).toBe("private")
    const { d: _d, ...pub } = V.testKeyEccP256
    expect(Either.getOrThrow(importJwk(pub)).key.type).toBe("public")
  })

  it("an RSA key needs its algorithm from alg or from the caller", () => {
    expect(reason(importJwk(V.testKeyRsa))).toContain("does not say its algorithm")
    expect(Either.getOrThrow(importJwk({ ...V.testKeyRsa, alg: "PS512" })).algorithm).toBe("rsa-pss-sha512")
    expect(Either.getOrThrow(importJwk({ ...V.testKeyRsa, alg: "RS256" })).algorithm).toBe("rsa-v1_5-sha256")
    expect(Either.getOrThrow(importJwk(V.testKeyRsa, { algorithm: "rsa-pss-sha512" })).algorithm).toBe(
      "rsa-pss-sha512"
    )
  })

  it("refuses keys that do not fit: another curve, a conflicting alg or algorithm, another use", () => {
    expect(reason(importJwk({ ...V.testKeyEccP256, alg: "ES384" }))).toContain("does not fit")
    expect(reason(importJwk(V.testKeyEccP256, { algorithm: "ecdsa-p384-sha384" }))).toContain("not ecdsa-p384")
    expect(reason(importJwk(V.testKeyEccP256, { algorithm: "ed25519" }))).toContain("not ed25519")
    expect(reason(importJwk({ ...V.testKeyEccP256, use: "enc" }))).toContain("not sig")
    expect(reason(importJwk({ ...V.testKeyEccP256, crv: "P-521" }))).toContain("unsupported EC curve")
    expect(reason(importJwk({ kty: "OKP", crv: "X25519", x: "AAAA" }))).toContain("unsupported OKP curve")
    expect(reason(importJwk({ kty: "oct", k: "c2hvcnQ" }))).toContain("at least 32 bytes")
    expect(reason(importJwk({ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA" }))).toContain("could not be imported")
    expect(reason(importJwk({ kty: "XYZ" }))).toContain("unsupported key type")
  })

  it("never puts key material in an error", () => {
    const bad = { ...V.testKeyEccP256, x: V.testKeyEccP256.d }
    const message = reason(importJwk(bad))
    expect(message).not.toContain(V.testKeyEccP256.d)
    expect(message).not.toContain(V.testKeyEccP256.x)
  })
})

describe("fromKeyObject", () => {
  it("refuses an RSA key under 2048 bits and a key of the wrong kind", () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 1024 })
    expect(reason(fromKeyObject(privateKey, "rsa-pss-sha512"))).toContain("2048")
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey
    expect(reason(fromKeyObject(ec, "rsa-v1_5-sha256"))).toContain("needs an RSA key")
    expect(reason(fromKeyObject(ec, "hmac-sha256"))).toContain("secret")
    expect(reason(fromKeyObject(createSecretKey(Buffer.alloc(32)), "ed25519"))).toContain("asymmetric")
  })
})

describe("exportPublicJwk and generateEcKeyPair", () => {
  it("publishes kid, kty, crv, x, y, use and alg, and nothing private", () => {
    const key = Either.getOrThrow(importJwk(V.testKeyEccP256))
    expect(Either.getOrThrow(exportPublicJwk(key))).toEqual({
      kid: "test-key-ecc-p256",
      kty: "EC",
      crv: "P-256",
      x: V.testKeyEccP256.x,
      y: V.testKeyEccP256.y,
      use: "sig",
      alg: "ES256"
    })
    expect(Either.getOrThrow(exportPublicJwk(Either.getOrThrow(importJwk(V.testKeyEd25519)), "ed"))).toEqual({
      kid: "ed",
      kty: "OKP",
      crv: "Ed25519",
      x: V.testKeyEd25519.x,
      use: "sig",
      alg: "EdDSA"
    })
    const rsa = Either.getOrThrow(exportPublicJwk(Either.getOrThrow(importJwk({ ...V.testKeyRsa, alg: "PS512" }))))
    expect(Object.keys(rsa).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"])
    expect(Either.isLeft(exportPublicJwk(Either.getOrThrow(importJwk({ kty: "oct", k: "A".repeat(43) }))))).toBe(true)
  })

  it("generates EC pairs whose halves sign and verify, P-256 by default", () => {
    for (const [curve, alg, length] of [["P-256", "ES256", 64], ["P-384", "ES384", 96]] as const) {
      const pair = curve === "P-256" ? generateEcKeyPair("k1") : generateEcKeyPair("k1", curve)
      expect(pair.publicJwk).toMatchObject({ kid: "k1", kty: "EC", crv: curve, use: "sig", alg })
      expect(pair.publicJwk.d).toBeUndefined()
      const signer = Either.getOrThrow(importJwk(pair.privateJwk))
      const verifier = Either.getOrThrow(importJwk(pair.publicJwk))
      const data = new Uint8Array(Buffer.from("base"))
      const signature = Either.getOrThrow(signBytes(signer, data))
      expect(signature.length).toBe(length)
      expect(verifyBytes(verifier, data, signature)).toBe(true)
      expect(verifyBytes(publicKeyOf(signer), data, signature)).toBe(true)
      expect(Either.getOrThrow(exportPublicJwk(signer))).toEqual(pair.publicJwk)
    }
  })

  it("refuses to sign with a public key", () => {
    const verifier = Either.getOrThrow(importJwk(generateEcKeyPair("k").publicJwk))
    expect(reason(signBytes(verifier, new Uint8Array(1)))).toContain("private key")
  })
})
