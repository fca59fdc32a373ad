import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as crypto from "node:crypto"
import type { SignatureAlgorithm, SignatureKey } from "../../../src/shared/http-signatures/algorithms.ts"
import { contentDigest } from "../../../src/shared/http-signatures/content-digest.ts"
import { fromKeyObject, generateEcKeyPair, importJwk, publicKeyOf } from "../../../src/shared/http-signatures/keys.ts"
import {
  parseSignatures,
  sign,
  type SignParams,
  verify,
  type VerifyOptions,
  withSignature
} from "../../../src/shared/http-signatures/message-signatures.ts"
import type { HttpMessage } from "../../../src/shared/http-signatures/message.ts"
import { component, signatureBase } from "../../../src/shared/http-signatures/signature-base.ts"
import * as SF from "../../../src/shared/http-signatures/structured-fields.ts"

const ecKey = (kid: string, curve: "P-256" | "P-384" = "P-256") => {
  const pair = generateEcKeyPair(kid, curve)
  return {
    signer: Either.getOrThrow(importJwk(pair.privateJwk)),
    verifier: Either.getOrThrow(importJwk(pair.publicJwk))
  }
}

const p256 = ecKey("p256")
const p384 = ecKey("p384", "P-384")
const ed = Either.getOrThrow(
  fromKeyObject(crypto.generateKeyPairSync("ed25519").privateKey, "ed25519", "ed")
)
const rsaPss = Either.getOrThrow(
  fromKeyObject(crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey, "rsa-pss-sha512", "rsa")
)
const hmac = Either.getOrThrow(fromKeyObject(crypto.createSecretKey(crypto.randomBytes(32)), "hmac-sha256", "hmac"))

const verifiers: { readonly [keyid: string]: SignatureKey } = {
  p256: p256.verifier,
  p384: p384.verifier,
  ed: publicKeyOf(ed),
  rsa: publicKeyOf(rsaPss),
  hmac
}
const options: VerifyOptions = { resolveKey: (keyid) => verifiers[keyid] }

const body = "{\"checkout\":{\"line_items\":[{\"id\":\"prod_123\",\"quantity\":2}]}}"
const request: HttpMessage = {
  method: "POST",
  url: "https://merchant.example.com/checkout-sessions?x=1",
  headers: {
    "content-type": "application/json",
    "idempotency-key": "550e8400-e29b-41d4-a716-446655440000",
    "content-digest": contentDigest(body)
  },
  body
}
const components = ["@method", "@authority", "@path", "@query", "idempotency-key", "content-digest", "content-type"]

const signWith = (key: SignatureKey, message = request, params: Partial<SignParams> = {}) =>
  withSignature(message, Either.getOrThrow(sign(message, { components, created: 1_700_000_000, ...params }, key)))

const codeOf = (result: Either.Either<unknown, { readonly code: string }>) =>
  Either.isLeft(result) ? result.left.code : "ok"

describe("sign", () => {
  it("writes Signature-Input and Signature under sig1, with created and keyid and no alg", () => {
    const headers = Either.getOrThrow(sign(request, { components: ["@method", "@path"], created: 1 }, p256.signer))
    expect(headers["signature-input"]).toBe("sig1=(\"@method\" \"@path\");created=1;keyid=\"p256\"")
    expect(headers.signature).toMatch(/^sig1=:[A-Za-z0-9+/]{86}==:$/) // 64 bytes: raw r||s
  })

  it("adds alg, expires, nonce and tag only when asked, in a fixed order", () => {
    const headers = Either.getOrThrow(sign(request, {
      components: [component("@method")],
      label: "my-sig",
      created: 1,
      expires: 2,
      nonce: "n",
      tag: "t",
      keyid: "other",
      includeAlg: true
    }, p256.signer))
    expect(headers["signature-input"]).toBe(
      "my-sig=(\"@method\");created=1;keyid=\"other\";alg=\"ecdsa-p256-sha256\";expires=2;nonce=\"n\";tag=\"t\""
    )
  })

  it("fails on a component the message lacks, a bad label, or a key that cannot sign", () => {
    expect(Either.isLeft(sign(request, { components: ["x-absent"] }, p256.signer))).toBe(true)
    expect(Either.isLeft(sign(request, { components: ["@status"] }, p256.signer))).toBe(true)
    expect(Either.isLeft(sign(request, { components: ["@method"], label: "Sig" }, p256.signer))).toBe(true)
    expect(Either.isLeft(sign(request, { components: ["@method"], created: 1.5 }, p256.signer))).toBe(true)
    expect(Either.isLeft(sign(request, { components: ["@method"] }, p256.verifier))).toBe(true)
  })
})

describe("verify", () => {
  const algorithms: ReadonlyArray<readonly [SignatureAlgorithm, SignatureKey]> = [
    ["ecdsa-p256-sha256", p256.signer],
    ["ecdsa-p384-sha384", p384.signer],
    ["ed25519", ed],
    ["rsa-pss-sha512", rsaPss],
    ["hmac-sha256", hmac]
  ]
  for (const [algorithm, key] of algorithms) {
    it(`round-trips ${algorithm}`, () => {
      const verified = Either.getOrThrow(verify(signWith(key), options))
      expect(verified.algorithm).toBe(algorithm)
      expect(verified.keyid).toBe(key.keyid)
      expect(verified.created).toBe(1_700_000_000)
      expect(verified.components.map((c) => c.name)).toEqual(components)
    })
  }

  it("round-trips a response covering request components with req", () => {
    const response: HttpMessage = {
      status: 201,
      headers: { "content-type": "application/json", "content-digest": contentDigest("{}") },
      body: "{}",
      request
    }
    const signed = signWith(p256.signer, response, {
      components: [
        "@status",
        "content-digest",
        component("@method", { req: true }),
        component("content-digest", { req: true })
      ]
    })
    expect(codeOf(verify(signed, options))).toBe("ok")
    const otherRequest = { ...request, method: "PUT" }
    expect(codeOf(verify({ ...signed, request: otherRequest }, options))).toBe("signature_invalid")
    const tamperedRequestBody = { ...request, body: `${body} ` }
    expect(codeOf(verify({ ...signed, request: tamperedRequestBody }, options))).toBe("digest_mismatch")
  })

  it("signature_missing without the fields, or without the label asked for", () => {
    expect(codeOf(verify(request, options))).toBe("signature_missing")
    const signed = signWith(p256.signer)
    const { signature: _s, ...noSignature } = signed.headers
    expect(codeOf(verify({ ...signed, headers: noSignature }, options))).toBe("signature_missing")
    expect(codeOf(verify({ ...signed, headers: { ...signed.headers, "signature-input": "" } }, options))).toBe(
      "signature_missing"
    )
    expect(codeOf(verify(signed, { ...options, label: "sig2" }))).toBe("signature_missing")
  })

  it("signature_invalid for malformed fields", () => {
    const signed = signWith(p256.signer)
    const headers = (h: { readonly [name: string]: string }) => ({ ...signed, headers: { ...signed.headers, ...h } })
    expect(codeOf(verify(headers({ "signature-input": "sig1=(\"@method\"" }), options))).toBe("signature_invalid")
    expect(codeOf(verify(headers({ "signature": "sig1=abc" }), options))).toBe("signature_invalid")
    expect(codeOf(verify(headers({ "signature": "sig2=:AAAA:" }), options))).toBe("signature_invalid")
    const extra = `${signed.headers.signature as string}, sig2=:AAAA:`
    expect(codeOf(verify(headers({ "signature": extra }), options))).toBe("signature_invalid")
    expect(codeOf(verify(headers({ "signature-input": "sig1=\"@method\";keyid=\"p256\"" }), options))).toBe(
      "signature_invalid"
    )
    expect(codeOf(verify(headers({ "signature-input": "sig1=(@method);keyid=\"p256\"" }), options))).toBe(
      "signature_invalid"
    )
    expect(codeOf(verify(headers({ "signature-input": "sig1=(\"@method\");keyid=p256" }), options))).toBe(
      "signature_invalid"
    )
    expect(codeOf(verify(headers({ "signature-input": "sig1=(\"@method\");created=\"1\";keyid=\"p256\"" }), options)))
      .toBe("signature_invalid")
  })

  it("signature_invalid when a covered header, the path, the query or the method changes", () => {
    const signed = signWith(p256.signer)
    const change = (m: Partial<HttpMessage>) => codeOf(verify({ ...signed, ...m }, options))
    expect(change({ headers: { ...signed.headers, "idempotency-key": "other" } })).toBe("signature_invalid")
    expect(change({ headers: { ...signed.headers, "content-type": "text/plain" } })).toBe("signature_invalid")
    expect(change({ url: "https://merchant.example.com/checkout-sessions/x?x=1" })).toBe("signature_invalid")
    expect(change({ url: "https://merchant.example.com/checkout-sessions?x=2" })).toBe("signature_invalid")
    expect(change({ url: "https://evil.example.com/checkout-sessions?x=1" })).toBe("signature_invalid")
    expect(change({ method: "PUT" })).toBe("signature_invalid")
    // An uncovered header may change.
    expect(change({ headers: { ...signed.headers, "user-agent": "x" } })).toBe("ok")
  })

  it("signature_invalid when a covered header disappears", () => {
    const signed = signWith(p256.signer)
    const { "idempotency-key": _k, ...rest } = signed.headers
    expect(codeOf(verify({ ...signed, headers: rest }, options))).toBe("signature_invalid")
  })

  it("digest_mismatch when the body changes under a covered Content-Digest", () => {
    const signed = signWith(p256.signer)
    expect(codeOf(verify({ ...signed, body: body.replace("2", "3") }, options))).toBe("digest_mismatch")
    expect(codeOf(verify({ ...signed, body: "" }, options))).toBe("digest_mismatch")
  })

  it("key_not_found for an unknown keyid or none", () => {
    expect(codeOf(verify(signWith(p256.signer, request, { keyid: "nobody" }), options))).toBe("key_not_found")
    const anonymous = Either.getOrThrow(fromKeyObject(p256.signer.key, "ecdsa-p256-sha256"))
    expect(codeOf(verify(signWith(anonymous), options))).toBe("key_not_found")
  })

  it("algorithm_unsupported for an algorithm not allowed, or an alg outside the registry", () => {
    const only256 = { ...options, algorithms: ["ecdsa-p256-sha256"] as const }
    expect(codeOf(verify(signWith(p256.signer), only256))).toBe("ok")
    expect(codeOf(verify(signWith(p384.signer), only256))).toBe("algorithm_unsupported")
    expect(codeOf(verify(signWith(ed), only256))).toBe("algorithm_unsupported")
    expect(codeOf(verify(signWith(p384.signer, request, { includeAlg: true }), only256))).toBe(
      "algorithm_unsupported"
    )
    const signed = signWith(p256.signer)
    const input = signed.headers["signature-input"] as string
    const withAlg = { ...signed, headers: { ...signed.headers, "signature-input": `${input};alg="es256"` } }
    expect(codeOf(verify(withAlg, options))).toBe("algorithm_unsupported")
  })

  it("signature_invalid when alg names another algorithm than the key's", () => {
    const signed = signWith(p256.signer)
    const input = signed.headers["signature-input"] as string
    const claimed = { ...signed, headers: { ...signed.headers, "signature-input": `${input};alg="ed25519"` } }
    expect(codeOf(verify(claimed, options))).toBe("signature_invalid")
    expect(codeOf(verify(signWith(p256.signer, request, { includeAlg: true }), options))).toBe("ok")
  })

  it("signature_invalid for a key of another curve under the keyid", () => {
    const mixedUp = { resolveKey: () => p256.verifier }
    expect(codeOf(verify(signWith(p384.signer, request, { keyid: "p256" }), mixedUp))).toBe("signature_invalid")
    const otherP256 = ecKey("p256")
    expect(codeOf(verify(signWith(otherP256.signer), options))).toBe("signature_invalid")
  })

  it("refuses a DER-encoded ECDSA value, accepting the same signature as raw r||s", () => {
    const params = SF.innerList(
      components.map((name) => SF.item(SF.string(name))),
      new Map([["keyid", SF.string("p256")]])
    )
    const base = Either.getOrThrow(signatureBase(request, params)).base
    const der = crypto.sign("sha256", Buffer.from(base), { key: p256.signer.key, dsaEncoding: "der" })
    const raw = crypto.sign("sha256", Buffer.from(base), { key: p256.signer.key, dsaEncoding: "ieee-p1363" })
    const message = (value: Buffer): HttpMessage => ({
      ...request,
      headers: {
        ...request.headers,
        "signature-input": `sig1=${Either.getOrThrow(SF.serializeInnerList(params))}`,
        "signature": `sig1=:${value.toString("base64")}:`
      }
    })
    expect(codeOf(verify(message(raw), options))).toBe("ok")
    expect(codeOf(verify(message(der), options))).toBe("signature_invalid")
  })

  it("signature_invalid when a required component is not covered", () => {
    const signed = signWith(p256.signer, request, { components: ["@method", "@path"] })
    expect(codeOf(verify(signed, { ...options, requiredComponents: ["@method"] }))).toBe("ok")
    expect(codeOf(verify(signed, { ...options, requiredComponents: ["@method", "@authority"] }))).toBe(
      "signature_invalid"
    )
    // Parameters count: content-digest;req is not content-digest.
    expect(codeOf(verify(signed, { ...options, requiredComponents: ["\"@method\";req"] }))).toBe("signature_invalid")
  })

  it("checks created and expires against now, only when now is given", () => {
    const signed = signWith(p256.signer, request, { created: 1000, expires: 1300 })
    expect(codeOf(verify(signed, options))).toBe("ok")
    expect(codeOf(verify(signed, { ...options, now: 1300 }))).toBe("ok")
    expect(codeOf(verify(signed, { ...options, now: 1301 }))).toBe("signature_invalid")
    expect(codeOf(verify(signed, { ...options, now: 1100, maxAgeSeconds: 100 }))).toBe("ok")
    expect(codeOf(verify(signed, { ...options, now: 1101, maxAgeSeconds: 100 }))).toBe("signature_invalid")
    expect(codeOf(verify(signed, { ...options, now: 900 }))).toBe("signature_invalid") // created in the future
    expect(codeOf(verify(signed, { ...options, now: 950 }))).toBe("ok") // within the default 60 s skew
    expect(codeOf(verify(signed, { ...options, now: 999, clockSkewSeconds: 0 }))).toBe("signature_invalid")
    expect(codeOf(verify(signed, { ...options, maxAgeSeconds: 100 }))).toBe("signature_invalid") // no now
    const undated = withSignature(request, Either.getOrThrow(sign(request, { components }, p256.signer)))
    expect(codeOf(verify(undated, { ...options, now: 1000 }))).toBe("ok")
    expect(codeOf(verify(undated, { ...options, now: 1000, maxAgeSeconds: 100 }))).toBe("signature_invalid")
  })

  it("checks the tag when asked", () => {
    const tagged = signWith(p256.signer, request, { tag: "ucp" })
    expect(codeOf(verify(tagged, { ...options, tag: "ucp" }))).toBe("ok")
    expect(codeOf(verify(tagged, { ...options, tag: "web-bot-auth" }))).toBe("signature_invalid")
  })

  it("verifies each of several signatures by its label", () => {
    const one = signWith(p256.signer)
    const both = withSignature(
      one,
      Either.getOrThrow(sign(one, { components: ["@method"], label: "second", created: 5 }, ed))
    )
    expect(Either.getOrThrow(parseSignatures(both)).map((s) => s.label)).toEqual(["sig1", "second"])
    expect(Either.getOrThrow(verify(both, options)).label).toBe("sig1")
    expect(Either.getOrThrow(verify(both, { ...options, label: "second" })).keyid).toBe("ed")
  })

  it("never puts key material or signature bytes in an error message", () => {
    const signed = signWith(p256.signer)
    const tampered = { ...signed, headers: { ...signed.headers, "content-type": "text/plain" } }
    const result = verify(tampered, options)
    const jwk = p256.signer.key.export({ format: "jwk" })
    const signature = (signed.headers.signature as string).slice(6, -1)
    if (Either.isRight(result)) throw new Error("verified")
    for (const secret of [jwk.d!, jwk.x!, jwk.y!, signature]) {
      expect(result.left.message).not.toContain(secret)
      expect(JSON.stringify(result.left)).not.toContain(secret)
    }
    expect(result.left.status).toBe(401)
  })
})
