import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { createPrivateKey, createPublicKey, createSecretKey } from "node:crypto"
import type { SignatureKey } from "../../../src/shared/http-signatures/algorithms.ts"
import { fromKeyObject, importJwk } from "../../../src/shared/http-signatures/keys.ts"
import { sign, verify, type VerifyOptions } from "../../../src/shared/http-signatures/message-signatures.ts"
import type { HttpMessage } from "../../../src/shared/http-signatures/message.ts"
import { signatureBase } from "../../../src/shared/http-signatures/signature-base.ts"
import * as SF from "../../../src/shared/http-signatures/structured-fields.ts"
import * as V from "./rfc9421-vectors.ts"

const rsa = Either.getOrThrow(importJwk(V.testKeyRsa, { algorithm: "rsa-v1_5-sha256" }))
const rsaPss = Either.getOrThrow(importJwk(V.testKeyRsaPss, { algorithm: "rsa-pss-sha512" }))
const p256 = Either.getOrThrow(importJwk(V.testKeyEccP256))
const ed25519 = Either.getOrThrow(importJwk(V.testKeyEd25519))
const shared = Either.getOrThrow(
  fromKeyObject(createSecretKey(Buffer.from(V.testSharedSecret, "base64")), "hmac-sha256", "test-shared-secret")
)

const keys: { readonly [keyid: string]: SignatureKey } = {
  "test-key-rsa": rsa,
  "test-key-rsa-pss": rsaPss,
  "test-key-ecc-p256": p256,
  "test-key-ed25519": ed25519,
  "test-shared-secret": shared
}
const options: VerifyOptions = { resolveKey: (keyid) => keys[keyid] }

/** The Inner List under the vector's label, as a verifier reads it from Signature-Input. */
const inputOf = (vector: V.Vector): SF.InnerList => {
  const dict = Either.getOrThrow(SF.parseDictionary(vector.signatureInput))
  const [member] = [...dict.values()]
  if (member?._tag !== "InnerList") throw new Error("not an inner list")
  return member
}

const labelOf = (vector: V.Vector): string => vector.signatureInput.slice(0, vector.signatureInput.indexOf("="))

const signed = (message: HttpMessage, vector: V.Vector): HttpMessage => ({
  ...message,
  headers: { ...message.headers, "signature-input": vector.signatureInput, "signature": vector.signature }
})

const cases: ReadonlyArray<readonly [string, HttpMessage, V.Vector]> = [
  ["B.2.1 minimal, rsa-pss-sha512", V.testRequest, V.b21],
  ["B.2.2 selective, rsa-pss-sha512", V.testRequest, V.b22],
  ["B.2.3 full coverage, rsa-pss-sha512", V.testRequest, V.b23],
  ["B.2.4 response, ecdsa-p256-sha256", V.testResponse, V.b24],
  ["B.2.5 hmac-sha256", V.testRequest, V.b25],
  ["B.2.6 ed25519", V.testRequest, V.b26],
  ["B.3 TLS-terminating proxy, ecdsa-p256-sha256", V.proxyRequest, V.b3],
  ["B.4 transformations, ed25519", V.transformRequest, V.b4],
  ["§2.4 response with request components", V.busyResponse, V.reqres1],
  ["§2.4 response to a signed request", V.busyResponse, V.reqres2],
  ["§2.5 / §3.2 example, rsa-pss-sha512", V.testRequest, V.example25],
  ["§4.3 proxy signature, rsa-v1_5-sha256", V.forwardedRequest, V.proxySig]
]

describe("RFC 9421 test vectors", () => {
  describe("signature base", () => {
    for (const [name, message, vector] of cases) {
      it(name, () => {
        const base = Either.getOrThrow(signatureBase(message, inputOf(vector)))
        expect(base.base).toBe(vector.base)
        expect(`${labelOf(vector)}=${base.signatureParams}`).toBe(vector.signatureInput)
      })
    }
  })

  describe("the given signature verifies", () => {
    for (const [name, message, vector] of cases) {
      it(name, () => {
        const result = verify(signed(message, vector), options)
        expect(Either.isRight(result)).toBe(true)
        const verified = Either.getOrThrow(result)
        expect(verified.label).toBe(labelOf(vector))
        expect(verified.algorithm).toBe(keys[verified.keyid!]!.algorithm)
      })
    }

    it("§4.3: the client's sig1 on the request it sent (ecdsa-p256-sha256)", () => {
      const message: HttpMessage = {
        ...V.testRequest,
        headers: {
          ...V.testRequest.headers,
          "signature-input": V.forwardedSignatureInput,
          "signature": V.forwardedSignature
        }
      }
      expect(Either.getOrThrow(verify(message, { ...options, label: "sig1" })).created).toBe(1618884475)
    })

    it("§4.3: after the proxy changed the authority, sig1 fails and proxy_sig verifies", () => {
      const message: HttpMessage = {
        ...V.forwardedRequest,
        headers: {
          ...V.forwardedRequest.headers,
          "signature-input": V.forwardedSignatureInput,
          "signature": V.forwardedSignature
        }
      }
      const sig1 = verify(message, { ...options, label: "sig1" })
      expect(Either.isLeft(sig1) && sig1.left.code).toBe("signature_invalid")
      const proxy = Either.getOrThrow(verify(message, { ...options, label: "proxy_sig" }))
      expect(proxy.alg).toBe("rsa-v1_5-sha256")
      expect(proxy.expires).toBe(1618884540)
    })

    it("B.2.4 fails with the test-response's Content-Digest as the source's message shows it", () => {
      const shown = "sha-512=:JlEy2bfUz7WrWIjc1qV6KVLpdr/7L5/L4h7Sxvh6sNHpDQWDCL+GauFQWcZBvVDhiyOnAQsxzZFYwi0wDH+1pw==:"
      const message = { ...V.testResponse, headers: { ...V.testResponse.headers, "content-digest": shown } }
      const result = verify(signed(message, V.b24), options)
      expect(Either.isLeft(result) && result.left.code).toBe("digest_mismatch")
    })

    it("fails with the right key once a covered component changes", () => {
      const tampered: HttpMessage = { ...V.testRequest, headers: { ...V.testRequest.headers, date: "x" } }
      const result = verify(signed(tampered, V.b26), options)
      expect(Either.isLeft(result) && result.left.code).toBe("signature_invalid")
    })
  })

  describe("deterministic algorithms reproduce the given signature exactly", () => {
    const reproduce = (message: HttpMessage, vector: V.Vector, key: SignatureKey, includeAlg = false) => {
      const input = inputOf(vector)
      const num = (name: string) => {
        const value = input.params.get(name)
        return value?._tag === "Integer" ? { [name]: value.value } : {}
      }
      const components = input.items.map((it) => ({ name: (it.value as { value: string }).value, params: it.params }))
      return Either.getOrThrow(sign(message, {
        label: labelOf(vector),
        components,
        keyid: key.keyid!,
        includeAlg,
        ...num("created"),
        ...num("expires")
      }, key))
    }

    it("B.2.5 hmac-sha256", () => {
      expect(reproduce(V.testRequest, V.b25, shared)).toEqual({
        "signature-input": V.b25.signatureInput,
        "signature": V.b25.signature
      })
    })

    it("B.2.6 ed25519", () => {
      expect(reproduce(V.testRequest, V.b26, ed25519)).toEqual({
        "signature-input": V.b26.signatureInput,
        "signature": V.b26.signature
      })
    })

    it("B.4 ed25519", () => {
      expect(reproduce(V.transformRequest, V.b4, ed25519)).toEqual({
        "signature-input": V.b4.signatureInput,
        "signature": V.b4.signature
      })
    })

    it("§4.3 rsa-v1_5-sha256 (with alg and expires)", () => {
      expect(reproduce(V.forwardedRequest, V.proxySig, rsa, true)).toEqual({
        "signature-input": V.proxySig.signatureInput,
        "signature": V.proxySig.signature
      })
    })
  })

  describe("B.4 transformations", () => {
    const message = signed(V.transformRequest, V.b4)
    const withHeaders = (headers: HttpMessage["headers"], url = V.transformRequest.url!, method = "GET") => ({
      ...message,
      method,
      url,
      headers: { ...headers, "signature-input": V.b4.signatureInput, "signature": V.b4.signature }
    })
    const ok = (m: HttpMessage) => Either.isRight(verify(m, options))

    it("still verifies after uncovered changes and an allowed recombination of Accept", () => {
      expect(ok(message)).toBe(true)
      expect(ok(withHeaders(
        { ...V.transformRequest.headers, "accept-language": "en-US,en;q=0.5" },
        "https://example.org/demo?name1=Value1&Name2=value2&param=added"
      ))).toBe(true)
      expect(ok(withHeaders({
        host: "example.org",
        referer: "https://developer.example.org/demo",
        accept: "application/json, */*"
      }))).toBe(true)
    })

    it("fails when the method, the authority or the order of the Accept lines change", () => {
      expect(ok(withHeaders(V.transformRequest.headers, "https://example.com/demo?name1=Value1&Name2=value2", "POST")))
        .toBe(false)
      expect(ok(withHeaders({ ...V.transformRequest.headers, accept: ["*/*", "application/json"] }))).toBe(false)
    })
  })

  describe("B.1 keys", () => {
    it("the PEM and JWK forms are the same keys", () => {
      const fromPem = Either.getOrThrow(fromKeyObject(createPublicKey(V.testKeyRsaPssPublicPem), "rsa-pss-sha512"))
      expect(fromPem.key.equals(createPublicKey(rsaPss.key))).toBe(true)
    })

    it("the RSASSA-PSS private key (PKCS#8 with the PSS identifier) signs what the public JWK verifies", () => {
      const pssOnly = Either.getOrThrow(
        fromKeyObject(createPrivateKey(V.testKeyRsaPssPrivatePem), "rsa-pss-sha512", "test-key-rsa-pss")
      )
      expect(pssOnly.key.asymmetricKeyType).toBe("rsa-pss")
      const headers = Either.getOrThrow(sign(V.testRequest, {
        components: ["@method", "@authority", "@path", "content-digest"],
        created: 1618884473,
        label: "sig-pss"
      }, pssOnly))
      const result = verify({ ...V.testRequest, headers: { ...V.testRequest.headers, ...headers } }, options)
      expect(Either.isRight(result)).toBe(true)
      // An RSASSA-PSS key may not make PKCS #1 v1.5 signatures.
      expect(Either.isLeft(fromKeyObject(pssOnly.key, "rsa-v1_5-sha256"))).toBe(true)
    })
  })
})
