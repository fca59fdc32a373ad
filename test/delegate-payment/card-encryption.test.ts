import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { createHash, randomBytes } from "node:crypto"
import {
  cardFingerprint,
  decryptCard,
  encryptCard,
  type EncryptedEnvelope
} from "../../src/delegate-payment/model/card-encryption.ts"
import { deriveVaultKeys, generateVaultKey } from "../../src/platform/key-derivation.ts"

const RAW = Buffer.alloc(32, 7)
const VAULT_KEY = RAW.toString("base64")
const CARD = { number: "4242424242424242", exp_month: "12", exp_year: "2027", cvc: "737" }

const keysOf = (base64: string) => {
  const result = deriveVaultKeys(base64)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const keys = keysOf(VAULT_KEY)
const ring = new Map([[keys.keyId, keys.encryptionKey]])
const encrypt = (aad = "vt_1") => encryptCard({ id: keys.keyId, key: keys.encryptionKey }, CARD, aad)

const flip = (base64: string, index = 0): string => {
  const bytes = Buffer.from(base64, "base64")
  bytes[index] = bytes[index]! ^ 0x01
  return bytes.toString("base64")
}

const failureReason = (envelope: EncryptedEnvelope, aad = "vt_1", keyRing: ReadonlyMap<string, Buffer> = ring) => {
  const result = decryptCard(keyRing, envelope, aad)
  if (Either.isRight(result)) throw new Error("expected a decryption failure")
  return result.left
}

describe("deriveVaultKeys", () => {
  it("derives a key id from the raw key and two distinct 32-byte keys", () => {
    expect(keys.keyId).toBe(createHash("sha256").update(RAW).digest("hex").slice(0, 8))
    expect(keys.keyId).toMatch(/^[0-9a-f]{8}$/)
    expect(keys.encryptionKey.length).toBe(32)
    expect(keys.fingerprintKey.length).toBe(32)
    expect(keys.encryptionKey.equals(keys.fingerprintKey)).toBe(false)
    expect(keys.encryptionKey.equals(RAW)).toBe(false)
    expect(keys.fingerprintKey.equals(RAW)).toBe(false)
  })

  it("is deterministic and changes with the key", () => {
    const again = keysOf(VAULT_KEY)
    expect(again.keyId).toBe(keys.keyId)
    expect(again.encryptionKey.equals(keys.encryptionKey)).toBe(true)
    const other = keysOf(Buffer.alloc(32, 8).toString("base64"))
    expect(other.keyId).not.toBe(keys.keyId)
    expect(other.encryptionKey.equals(keys.encryptionKey)).toBe(false)
  })

  it("accepts unpadded and URL-safe base64 of 32 bytes and a generated key", () => {
    const raw = Buffer.from(Array.from({ length: 32 }, (_, i) => 250 - i))
    expect(keysOf(raw.toString("base64").replace(/=+$/, "")).keyId).toBe(keysOf(raw.toString("base64")).keyId)
    expect(keysOf(raw.toString("base64url")).keyId).toBe(keysOf(raw.toString("base64")).keyId)
    expect(Either.isRight(deriveVaultKeys(generateVaultKey()))).toBe(true)
  })

  it("rejects keys that are not exactly 32 bytes of base64", () => {
    for (
      const bad of [
        "",
        Buffer.alloc(16).toString("base64"),
        Buffer.alloc(31).toString("base64"),
        Buffer.alloc(33).toString("base64"),
        Buffer.alloc(64).toString("base64"),
        "not base64 at all!!",
        "a".repeat(32), // 32 characters, but that is 24 bytes
        VAULT_KEY.slice(0, -2) + "*="
      ]
    ) {
      const result = deriveVaultKeys(bad)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(result.left._tag).toBe("VaultKeyError")
    }
  })
})

describe("encryptCard / decryptCard", () => {
  it("round-trips", () => {
    const envelope = encrypt()
    expect(envelope.key_id).toBe(keys.keyId)
    expect(Buffer.from(envelope.iv, "base64").length).toBe(12)
    expect(Buffer.from(envelope.tag, "base64").length).toBe(16)
    expect(decryptCard(ring, envelope, "vt_1")).toEqual(Either.right(CARD))
  })

  it("never stores the card in clear", () => {
    const envelope = encrypt()
    const stored = JSON.stringify(envelope)
    expect(stored).not.toContain(CARD.number)
    expect(Buffer.from(envelope.ciphertext, "base64").toString("latin1")).not.toContain(CARD.number)
  })

  it("uses a fresh IV each time", () => {
    const a = encrypt()
    const b = encrypt()
    expect(a.iv).not.toBe(b.iv)
    expect(a.ciphertext).not.toBe(b.ciphertext)
  })

  it("detects a flipped ciphertext byte", () => {
    const envelope = encrypt()
    const err = failureReason({ ...envelope, ciphertext: flip(envelope.ciphertext, 3) })
    expect(err._tag).toBe("VaultDecryptError")
    expect(err.reason).toBe("authentication_failed")
  })

  it("detects a flipped tag byte", () => {
    const envelope = encrypt()
    expect(failureReason({ ...envelope, tag: flip(envelope.tag, 15) }).reason).toBe("authentication_failed")
  })

  it("detects a flipped IV byte", () => {
    const envelope = encrypt()
    expect(failureReason({ ...envelope, iv: flip(envelope.iv, 0) }).reason).toBe("authentication_failed")
  })

  it("rejects an envelope moved to another token (wrong AAD)", () => {
    expect(failureReason(encrypt("vt_1"), "vt_2").reason).toBe("authentication_failed")
  })

  it("rejects an unknown key id", () => {
    const envelope = encrypt()
    const err = failureReason({ ...envelope, key_id: "deadbeef" })
    expect(err.reason).toBe("unknown_key")
    expect(err.keyId).toBe("deadbeef")
    expect(err.message).toContain("unknown_key")
  })

  it("rejects an envelope relabelled to another key of the ring", () => {
    const other = keysOf(randomBytes(32).toString("base64"))
    const twoKeys = new Map([
      [keys.keyId, keys.encryptionKey],
      [other.keyId, other.encryptionKey]
    ])
    const envelope = encrypt()
    expect(failureReason({ ...envelope, key_id: other.keyId }, "vt_1", twoKeys).reason).toBe("authentication_failed")
  })

  it("opens envelopes of a retired key kept in the ring (rotation)", () => {
    const old = keysOf(randomBytes(32).toString("base64"))
    const oldEnvelope = encryptCard({ id: old.keyId, key: old.encryptionKey }, CARD, "vt_9")
    const rotated = new Map([
      [keys.keyId, keys.encryptionKey],
      [old.keyId, old.encryptionKey]
    ])
    expect(decryptCard(rotated, oldEnvelope, "vt_9")).toEqual(Either.right(CARD))
  })

  it("reports malformed envelopes", () => {
    const envelope = encrypt()
    expect(failureReason({ ...envelope, iv: Buffer.alloc(8).toString("base64") }).reason).toBe("malformed")
    expect(failureReason({ ...envelope, tag: "%%%" }).reason).toBe("malformed")
    expect(failureReason({ ...envelope, tag: Buffer.alloc(12).toString("base64") }).reason).toBe("malformed")
  })

  it("errors carry no card data", () => {
    const envelope = encrypt()
    const err = failureReason({ ...envelope, ciphertext: flip(envelope.ciphertext) })
    expect(JSON.stringify(err)).not.toContain(CARD.number)
    expect(String(err)).not.toContain(CARD.number)
  })
})

describe("cardFingerprint", () => {
  it("is stable for the same card and key", () => {
    const a = cardFingerprint(keys.fingerprintKey, CARD.number, "12", "2027")
    const b = cardFingerprint(keysOf(VAULT_KEY).fingerprintKey, CARD.number, "12", "2027")
    expect(a).toBe(b)
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    expect(a).not.toContain(CARD.number)
  })

  it("differs by card, expiry and key", () => {
    const base = cardFingerprint(keys.fingerprintKey, CARD.number)
    expect(cardFingerprint(keys.fingerprintKey, "5555555555554444")).not.toBe(base)
    expect(cardFingerprint(keys.fingerprintKey, CARD.number, "12", "2027")).not.toBe(base)
    expect(cardFingerprint(keys.fingerprintKey, CARD.number, "11", "2027")).not.toBe(
      cardFingerprint(keys.fingerprintKey, CARD.number, "12", "2027")
    )
    const other = keysOf(Buffer.alloc(32, 9).toString("base64"))
    expect(cardFingerprint(other.fingerprintKey, CARD.number)).not.toBe(base)
  })

  it("is separated from the encryption key", () => {
    expect(cardFingerprint(keys.encryptionKey, CARD.number)).not.toBe(cardFingerprint(keys.fingerprintKey, CARD.number))
  })
})
