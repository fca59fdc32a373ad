/**
 * Card encryption for the delegate payment vault (CONTRACT §7): AES-256-GCM with a random 96-bit
 * IV per encryption, and additional authenticated data that binds the ciphertext to its token id
 * and key id, so that a stored envelope cannot be moved to another token row.
 *
 * Keys come from `VAULT_KEY` (32 random bytes, base64) through HKDF-SHA256 with fixed info labels:
 * one key for encryption, another for the card fingerprint HMAC, a third for the fingerprints of
 * idempotent request bodies (`src/idempotency/idempotency-middleware.ts`), so no use weakens another.
 * `keyId` = first 8 hex characters of SHA-256 of the raw VAULT_KEY: it is stored with every
 * envelope, so a rotation is visible and old envelopes can still be opened while their key is kept
 * in the key ring passed to `decryptCard`. Fingerprints are keyed by the current VAULT_KEY, so they
 * change when the key rotates.
 *
 * Plain functions; nothing here logs, and errors never carry key or card material.
 */
import { Data, Either } from "effect"
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from "node:crypto"

export const ENCRYPTION_INFO = "acp-delegate-vault/card-encryption/aes-256-gcm/v1"
export const FINGERPRINT_INFO = "acp-delegate-vault/card-fingerprint/hmac-sha256/v1"
export const REQUEST_FINGERPRINT_INFO = "acp-idempotency/request-fingerprint/hmac-sha256/v1"
const AAD_PREFIX = "acp-delegate-vault/card/v1"
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_BYTES = 32

export interface VaultKeys {
  /** First 8 hex characters of SHA-256 of the raw VAULT_KEY. */
  readonly keyId: string
  /** AES-256-GCM key (HKDF of VAULT_KEY with `ENCRYPTION_INFO`). */
  readonly encryptionKey: Buffer
  /** HMAC-SHA256 key for card fingerprints (HKDF of VAULT_KEY with `FINGERPRINT_INFO`). */
  readonly fingerprintKey: Buffer
  /**
   * HMAC-SHA256 key for the fingerprints of idempotent request bodies, which may hold a card
   * (HKDF of VAULT_KEY with `REQUEST_FINGERPRINT_INFO`).
   */
  readonly requestFingerprintKey: Buffer
}

/** The stored form of an encrypted card. */
export interface EncryptedEnvelope {
  readonly key_id: string
  /** base64, 12 bytes */
  readonly iv: string
  /** base64 */
  readonly ciphertext: string
  /** base64, 16 bytes */
  readonly tag: string
}

export class VaultKeyError extends Data.TaggedError("VaultKeyError")<{ readonly message: string }> {}

export class VaultDecryptError extends Data.TaggedError("VaultDecryptError")<{
  /** `unknown_key`: no key for `key_id`; `malformed`: bad base64 / lengths / JSON; `authentication_failed`: tampered, wrong key or wrong AAD. */
  readonly reason: "unknown_key" | "malformed" | "authentication_failed"
  readonly keyId: string
}> {
  override get message(): string {
    return `cannot decrypt card envelope (key ${this.keyId}): ${this.reason}`
  }
}

const base64Alphabet = /^[A-Za-z0-9+/]*={0,2}$/
const base64UrlAlphabet = /^[A-Za-z0-9_-]*={0,2}$/

/** Strict base64 (standard or URL-safe alphabet, padding optional) → bytes; `undefined` if not canonical. */
const decodeBase64Strict = (input: string): Buffer | undefined => {
  const urlSafe = !base64Alphabet.test(input)
  if (urlSafe && !base64UrlAlphabet.test(input)) return undefined
  const bytes = Buffer.from(input, urlSafe ? "base64url" : "base64")
  const canonical = bytes.toString(urlSafe ? "base64url" : "base64").replace(/=+$/, "")
  return canonical === input.replace(/=+$/, "") ? bytes : undefined
}

const hkdf = (key: Buffer, info: string): Buffer =>
  Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), Buffer.from(info, "utf8"), KEY_BYTES))

/** Derives the vault keys from `VAULT_KEY`, which must be exactly 32 bytes in base64. */
export const deriveVaultKeys = (vaultKeyBase64: string): Either.Either<VaultKeys, VaultKeyError> => {
  const raw = decodeBase64Strict(vaultKeyBase64.trim())
  if (raw === undefined) return Either.left(new VaultKeyError({ message: "VAULT_KEY must be base64" }))
  if (raw.length !== KEY_BYTES) {
    return Either.left(
      new VaultKeyError({ message: `VAULT_KEY must decode to exactly ${KEY_BYTES} bytes (got ${raw.length})` })
    )
  }
  const keys: VaultKeys = {
    keyId: createHash("sha256").update(raw).digest("hex").slice(0, 8),
    encryptionKey: hkdf(raw, ENCRYPTION_INFO),
    fingerprintKey: hkdf(raw, FINGERPRINT_INFO),
    requestFingerprintKey: hkdf(raw, REQUEST_FINGERPRINT_INFO)
  }
  raw.fill(0)
  return Either.right(keys)
}

/** A fresh random VAULT_KEY in base64 (for the generated development key). */
export const generateVaultKey = (): string => randomBytes(KEY_BYTES).toString("base64")

const aadFor = (keyId: string, aad: string): Buffer => Buffer.from(`${AAD_PREFIX}|${keyId}|${aad}`, "utf8")

/**
 * Encrypts `plaintext` (serialized as JSON) with a random IV. `aad` is the token id the envelope
 * belongs to; the same value must be given to `decryptCard`.
 */
export const encryptCard = (
  key: { readonly id: string; readonly key: Buffer },
  plaintext: object,
  aad: string
): EncryptedEnvelope => {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", key.key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(aadFor(key.id, aad))
  const data = Buffer.from(JSON.stringify(plaintext), "utf8")
  const ciphertext = Buffer.concat([cipher.update(data), cipher.final()])
  data.fill(0)
  return {
    key_id: key.id,
    iv: iv.toString("base64"),
    ciphertext: ciphertext.toString("base64"),
    tag: cipher.getAuthTag().toString("base64")
  }
}

/**
 * Opens an envelope with the key named by its `key_id` from `keys` (the key ring: current and
 * retired encryption keys by key id), checking `aad` (the token id). Returns the parsed JSON.
 */
export const decryptCard = (
  keys: ReadonlyMap<string, Buffer>,
  envelope: EncryptedEnvelope,
  aad: string
): Either.Either<unknown, VaultDecryptError> => {
  const keyId = envelope.key_id
  const key = keys.get(keyId)
  if (key === undefined) return Either.left(new VaultDecryptError({ reason: "unknown_key", keyId }))
  const iv = decodeBase64Strict(envelope.iv)
  const tag = decodeBase64Strict(envelope.tag)
  const ciphertext = decodeBase64Strict(envelope.ciphertext)
  if (
    iv === undefined || tag === undefined || ciphertext === undefined || iv.length !== IV_BYTES ||
    tag.length !== TAG_BYTES
  ) {
    return Either.left(new VaultDecryptError({ reason: "malformed", keyId }))
  }
  let plain: Buffer
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(aadFor(keyId, aad))
    decipher.setAuthTag(tag)
    plain = Buffer.concat([decipher.update(ciphertext), decipher.final()])
  } catch {
    return Either.left(new VaultDecryptError({ reason: "authentication_failed", keyId }))
  }
  try {
    return Either.right(JSON.parse(plain.toString("utf8")) as unknown)
  } catch {
    return Either.left(new VaultDecryptError({ reason: "malformed", keyId }))
  } finally {
    plain.fill(0)
  }
}

/**
 * Keyed fingerprint of a card: hex HMAC-SHA256 over the number and, when given, the expiry.
 * The same card gives the same fingerprint under the same VAULT_KEY; without the key it reveals
 * nothing about the number. Callers must pass the expiry consistently (or never) to compare.
 */
export const cardFingerprint = (fingerprintKey: Buffer, number: string, expMonth?: string, expYear?: string): string =>
  createHmac("sha256", fingerprintKey)
    .update(`card|${number}|${expMonth ?? ""}|${expYear ?? ""}`, "utf8")
    .digest("hex")
