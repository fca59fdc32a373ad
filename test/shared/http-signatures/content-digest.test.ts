import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { contentDigest, verifyContentDigest } from "../../../src/shared/http-signatures/content-digest.ts"

// RFC 9530 Appendix D: digests of `{"hello": "world"}` (no trailing newline).
const HELLO = "{\"hello\": \"world\"}"
const SHA256 = "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"
const SHA512 = "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"

const code = <A>(result: Either.Either<A, { readonly code: string }>) => Either.isLeft(result) ? result.left.code : "ok"

describe("contentDigest", () => {
  it("computes RFC 9530's sample digests over the raw bytes", () => {
    expect(contentDigest(HELLO)).toBe(SHA256)
    expect(contentDigest(new Uint8Array(Buffer.from(HELLO)), ["sha-512"])).toBe(SHA512)
    expect(contentDigest(HELLO, ["sha-256", "sha-512"])).toBe(`${SHA256}, ${SHA512}`)
  })

  it("hashes the bytes as sent: a re-serialized body has another digest", () => {
    expect(contentDigest("{\"hello\":\"world\"}")).not.toBe(SHA256)
    expect(contentDigest("")).toBe("sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
  })
})

describe("verifyContentDigest", () => {
  it("accepts a matching digest and says which algorithms it checked", () => {
    expect(Either.getOrThrow(verifyContentDigest(SHA256, HELLO))).toEqual(["sha-256"])
    expect(Either.getOrThrow(verifyContentDigest(`${SHA512}, ${SHA256}`, HELLO))).toEqual(["sha-512", "sha-256"])
  })

  it("ignores unknown and insecure algorithms, but needs one known", () => {
    expect(Either.getOrThrow(verifyContentDigest(`md5=:Sd/dVLAcvNLSq16eXua5uQ==:, ${SHA256}`, HELLO))).toEqual([
      "sha-256"
    ])
    expect(code(verifyContentDigest("md5=:Sd/dVLAcvNLSq16eXua5uQ==:", HELLO))).toBe("digest_mismatch")
    expect(code(verifyContentDigest("sha-3=:AAAA:", HELLO))).toBe("digest_mismatch")
  })

  it("requires the algorithms asked for (UCP: sha-256)", () => {
    expect(code(verifyContentDigest(SHA512, HELLO, { required: ["sha-256"] }))).toBe("digest_mismatch")
    expect(code(verifyContentDigest(`${SHA512}, ${SHA256}`, HELLO, { required: ["sha-256"] }))).toBe("ok")
  })

  it("refuses a digest of other bytes, even when another algorithm present matches", () => {
    expect(code(verifyContentDigest(SHA256, `${HELLO}\n`))).toBe("digest_mismatch")
    const wrong512 = "sha-512=:" + Buffer.alloc(64).toString("base64") + ":"
    expect(code(verifyContentDigest(`${SHA256}, ${wrong512}`, HELLO))).toBe("digest_mismatch")
  })

  it("refuses a missing or malformed field", () => {
    expect(code(verifyContentDigest(undefined, HELLO))).toBe("digest_mismatch")
    expect(code(verifyContentDigest("sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", HELLO))).toBe(
      "digest_mismatch"
    )
    expect(code(verifyContentDigest("sha-256=\"X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\"", HELLO))).toBe(
      "digest_mismatch"
    )
    expect(code(verifyContentDigest("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:,", HELLO))).toBe(
      "digest_mismatch"
    )
  })
})
