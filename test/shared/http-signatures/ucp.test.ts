import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import * as crypto from "node:crypto"
import type { SignatureKey } from "../../../src/shared/http-signatures/algorithms.ts"
import { contentDigest } from "../../../src/shared/http-signatures/content-digest.ts"
import { fromKeyObject, generateEcKeyPair, importJwk } from "../../../src/shared/http-signatures/keys.ts"
import { parseSignatures, sign, withSignature } from "../../../src/shared/http-signatures/message-signatures.ts"
import type { HttpMessage } from "../../../src/shared/http-signatures/message.ts"
import {
  checkUcpCoverage,
  signUcpMessage,
  ucpAgentProfile,
  ucpRequestComponents,
  ucpResponseComponents,
  verifyUcpMessage
} from "../../../src/shared/http-signatures/ucp.ts"

const pair = (kid: string, curve: "P-256" | "P-384") => {
  const jwks = generateEcKeyPair(kid, curve)
  return {
    signer: Either.getOrThrow(importJwk(jwks.privateJwk)),
    verifier: Either.getOrThrow(importJwk(jwks.publicJwk))
  }
}
const platform = pair("platform-2026", "P-256")
const merchant = pair("merchant-2026", "P-384")

/** The signer's profile `signing_keys`, as a verifier resolves them. */
const signingKeys: { readonly [kid: string]: SignatureKey } = {
  "platform-2026": platform.verifier,
  "merchant-2026": merchant.verifier
}
const resolveKey = (kid: string) => signingKeys[kid]

const body = "{\"checkout\":{\"line_items\":[{\"id\":\"prod_123\",\"quantity\":2}]}}"
const post: HttpMessage = {
  method: "POST",
  url: "https://merchant.example.com/checkout-sessions",
  headers: {
    "content-type": "application/json",
    "ucp-agent": "profile=\"https://platform.example/.well-known/ucp\"",
    "idempotency-key": "550e8400-e29b-41d4-a716-446655440000"
  },
  body
}
const get: HttpMessage = { method: "GET", url: "https://merchant.example.com/checkout-sessions/chk_123", headers: {} }
const response: HttpMessage = {
  status: 201,
  headers: { "content-type": "application/json" },
  body: "{\"checkout\":{\"id\":\"chk_123\",\"status\":\"ready_for_complete\"}}"
}

const signUcp = (message: HttpMessage, key: SignatureKey, created?: number): HttpMessage => {
  const headers = Either.getOrThrow(signUcpMessage(message, { key, ...(created === undefined ? {} : { created }) }))
  const { "content-digest": digest, ...signature } = headers
  return withSignature(
    digest === undefined ? message : { ...message, headers: { ...message.headers, "content-digest": digest } },
    signature
  )
}

const codeOf = (result: Either.Either<unknown, { readonly code: string }>) =>
  Either.isLeft(result) ? result.left.code : "ok"

describe("UCP component lists", () => {
  it("request: method, authority, path, then query, ucp-agent, idempotency-key and body fields as they apply", () => {
    expect(ucpRequestComponents(get)).toEqual(["@method", "@authority", "@path"])
    expect(ucpRequestComponents({ ...get, url: "https://m.example/catalog?q=shoes" })).toEqual([
      "@method",
      "@authority",
      "@path",
      "@query"
    ])
    expect(ucpRequestComponents(post)).toEqual([
      "@method",
      "@authority",
      "@path",
      "ucp-agent",
      "idempotency-key",
      "content-digest",
      "content-type"
    ])
    expect(ucpRequestComponents({ method: "DELETE", url: "https://m.example/x", headers: {} })).toEqual([
      "@method",
      "@authority",
      "@path",
      "idempotency-key"
    ])
  })

  it("response: status, and content-digest and content-type with a body", () => {
    expect(ucpResponseComponents(response)).toEqual(["@status", "content-digest", "content-type"])
    expect(ucpResponseComponents({ status: 204, headers: {} })).toEqual(["@status"])
  })
})

describe("ucpAgentProfile", () => {
  const agent = (value: string): HttpMessage => ({ ...get, headers: { "ucp-agent": value } })

  it("reads the profile URL of the UCP-Agent dictionary", () => {
    expect(ucpAgentProfile(post)).toBe("https://platform.example/.well-known/ucp")
    expect(ucpAgentProfile(agent("version=\"2026-04-08\", profile=\"https://p.example/ucp\";x"))).toBe(
      "https://p.example/ucp"
    )
  })

  it("gives nothing for an absent header, a malformed one, a token, or a URL that is not https", () => {
    expect(ucpAgentProfile(get)).toBeUndefined()
    expect(ucpAgentProfile(agent("profile=\"https://p.example/ucp"))).toBeUndefined()
    expect(ucpAgentProfile(agent("profile=https"))).toBeUndefined()
    expect(ucpAgentProfile(agent("profile=\"http://p.example/ucp\""))).toBeUndefined()
    expect(ucpAgentProfile(agent("profile=\"not a url\""))).toBeUndefined()
    expect(ucpAgentProfile(agent("agent=\"https://p.example/ucp\""))).toBeUndefined()
  })
})

describe("signUcpMessage", () => {
  it("adds a sha-256 Content-Digest and signs UCP's components without alg", () => {
    const headers = Either.getOrThrow(signUcpMessage(post, { key: platform.signer }))
    expect(headers["content-digest"]).toBe(contentDigest(body, ["sha-256"]))
    expect(headers["signature-input"]).toBe(
      "sig1=(\"@method\" \"@authority\" \"@path\" \"ucp-agent\" \"idempotency-key\" \"content-digest\" \"content-type\")"
        + ";keyid=\"platform-2026\""
    )
    expect(headers["signature"]).toMatch(/^sig1=:[A-Za-z0-9+/]{86}==:$/)
  })

  it("signs a bodiless GET with no Content-Digest, and a response with created", () => {
    const headers = Either.getOrThrow(signUcpMessage(get, { key: platform.signer }))
    expect(headers["content-digest"]).toBeUndefined()
    expect(headers["signature-input"]).toBe("sig1=(\"@method\" \"@authority\" \"@path\");keyid=\"platform-2026\"")
    const signed = Either.getOrThrow(signUcpMessage(response, { key: merchant.signer, created: 1738617601 }))
    expect(signed["signature-input"]).toBe(
      "sig1=(\"@status\" \"content-digest\" \"content-type\");created=1738617601;keyid=\"merchant-2026\""
    )
    expect(signed.signature).toMatch(/^sig1=:[A-Za-z0-9+/]{128}:$/) // 96 bytes for P-384
  })

  it("fails for a state-changing request without an Idempotency-Key", () => {
    const { "idempotency-key": _k, ...headers } = post.headers
    expect(Either.isLeft(signUcpMessage({ ...post, headers }, { key: platform.signer }))).toBe(true)
  })
})

describe("verifyUcpMessage", () => {
  it("verifies UCP requests and responses signed with P-256 and P-384", () => {
    for (const message of [post, get, { ...get, url: "https://m.example/catalog?q=shoes" }]) {
      expect(codeOf(verifyUcpMessage(signUcp(message, platform.signer), { resolveKey }))).toBe("ok")
      expect(codeOf(verifyUcpMessage(signUcp(message, merchant.signer), { resolveKey }))).toBe("ok")
    }
    expect(codeOf(verifyUcpMessage(signUcp(response, merchant.signer, 100), { resolveKey, now: 150 }))).toBe("ok")
    expect(codeOf(verifyUcpMessage(signUcp({ status: 204, headers: {} }, platform.signer), { resolveKey }))).toBe("ok")
  })

  it("refuses a signature that does not cover what UCP requires of the message", () => {
    const partial = (components: ReadonlyArray<string>) =>
      withSignature(
        { ...post, headers: { ...post.headers, "content-digest": contentDigest(body) } },
        Either.getOrThrow(sign({ ...post, headers: { ...post.headers, "content-digest": contentDigest(body) } }, {
          components
        }, platform.signer))
      )
    const all = ucpRequestComponents(post)
    expect(codeOf(verifyUcpMessage(partial(all), { resolveKey }))).toBe("ok")
    for (const left of all) {
      const result = verifyUcpMessage(partial(all.filter((c) => c !== left)), { resolveKey })
      expect(codeOf(result), left).toBe("signature_invalid")
    }
    const parsed = Either.getOrThrow(parseSignatures(partial(["@method", "@path"])))[0]!
    expect(codeOf(checkUcpCoverage(post, parsed))).toBe("signature_invalid")
  })

  it("a ucp-agent header added after signing must then be covered", () => {
    const { "ucp-agent": _a, ...headers } = post.headers
    const signed = signUcp({ ...post, headers }, platform.signer)
    expect(codeOf(verifyUcpMessage(signed, { resolveKey }))).toBe("ok")
    const added = { ...signed, headers: { ...signed.headers, "ucp-agent": "profile=\"https://evil.example/\"" } }
    expect(codeOf(verifyUcpMessage(added, { resolveKey }))).toBe("signature_invalid")
  })

  it("requires a sha-256 Content-Digest", () => {
    const digest512 = { ...post, headers: { ...post.headers, "content-digest": contentDigest(body, ["sha-512"]) } }
    const signed = withSignature(
      digest512,
      Either.getOrThrow(sign(digest512, { components: ucpRequestComponents(post) }, platform.signer))
    )
    expect(codeOf(verifyUcpMessage(signed, { resolveKey }))).toBe("digest_mismatch")
  })

  it("maps each failure to UCP's code and status", () => {
    const signed = signUcp(post, platform.signer, 1000)
    const ed = Either.getOrThrow(fromKeyObject(crypto.generateKeyPairSync("ed25519").privateKey, "ed25519", "ed"))
    const cases: ReadonlyArray<readonly [string, Either.Either<unknown, { readonly code: string }>, number]> = [
      ["signature_missing", verifyUcpMessage(post, { resolveKey }), 401],
      ["digest_mismatch", verifyUcpMessage({ ...signed, body: `${body} ` }, { resolveKey }), 400],
      ["signature_invalid", verifyUcpMessage({ ...signed, url: `${post.url}/x` }, { resolveKey }), 401],
      ["key_not_found", verifyUcpMessage(signed, { resolveKey: () => undefined }), 401],
      [
        "algorithm_unsupported",
        verifyUcpMessage(signUcp(post, ed), { resolveKey: () => Either.getOrThrow(fromKeyObject(ed.key, "ed25519")) }),
        400
      ],
      ["signature_invalid", verifyUcpMessage(signed, { resolveKey, now: 2000, maxAgeSeconds: 300 }), 401]
    ]
    for (const [code, result, status] of cases) {
      expect(codeOf(result)).toBe(code)
      if (Either.isLeft(result)) expect((result.left as unknown as { status: number }).status).toBe(status)
    }
  })

  it.effect("is used from Effect code as it is: an Either is an Effect", () =>
    Effect.gen(function*() {
      const signed = signUcp(post, platform.signer)
      const verified = yield* verifyUcpMessage(signed, { resolveKey })
      expect(verified.keyid).toBe("platform-2026")
      const error = yield* Effect.flip(verifyUcpMessage(post, { resolveKey }))
      expect(error._tag).toBe("HttpSignatureError")
      expect(error.code).toBe("signature_missing")
    }))

  it("only P-256 when the verifier allows ES256 alone", () => {
    const signed = signUcp(post, merchant.signer)
    expect(codeOf(verifyUcpMessage(signed, { resolveKey, algorithms: ["ecdsa-p256-sha256"] }))).toBe(
      "algorithm_unsupported"
    )
  })
})

describe("sign → verify properties", () => {
  const printable = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,30}[\x21-\x7e])?$/)
  const message = fc.record({
    body: fc.uint8Array({ minLength: 1, maxLength: 200 }),
    key: fc.stringMatching(/^[A-Za-z0-9-]{16,40}$/),
    agent: printable,
    path: fc.stringMatching(/^(\/[a-z0-9_-]{1,10}){1,4}$/)
  }).map(({ agent, body, key, path }): HttpMessage => ({
    method: "POST",
    url: `https://merchant.example.com${path}`,
    headers: { "content-type": "application/json", "idempotency-key": key, "ucp-agent": agent },
    body
  }))

  it("a signed UCP message verifies; any single-byte change in the body or a covered header fails", () => {
    fc.assert(
      fc.property(message, fc.nat(), fc.integer({ min: 1, max: 255 }), (m, at, delta) => {
        const signed = signUcp(m, platform.signer)
        expect(codeOf(verifyUcpMessage(signed, { resolveKey }))).toBe("ok")

        const bytes = new Uint8Array(m.body as Uint8Array)
        const i = at % bytes.length
        bytes[i] = (bytes[i]! + delta) % 256
        expect(codeOf(verifyUcpMessage({ ...signed, body: bytes }, { resolveKey }))).toBe("digest_mismatch")

        for (const name of ["idempotency-key", "ucp-agent", "content-type"]) {
          const value = signed.headers[name] as string
          const j = at % value.length
          // Another printable character in the same place (never a space at either end, which is trimmed).
          const code = 0x21 + ((value.charCodeAt(j) - 0x21 + (delta % 93) + 1) % 94)
          const changed = value.slice(0, j) + String.fromCharCode(code) + value.slice(j + 1)
          const tampered = { ...signed, headers: { ...signed.headers, [name]: changed } }
          expect(codeOf(verifyUcpMessage(tampered, { resolveKey })), name).toBe("signature_invalid")
        }
      }),
      { numRuns: 60 }
    )
  })
})
