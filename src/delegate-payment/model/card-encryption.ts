/**
 * Card encryption for the delegate payment vault (CONTRACT §7): AES-256-GCM with a random 96-bit
 * IV per encryption, and additional authenticated data that binds the ciphertext to its token id
 * and key id, so that a stored envelope cannot be moved to another token row.
 *
 * The keys are derived from `VAULT_KEY` (`src/platform/key-derivation.ts`). Every envelope keeps
 * the id of the key that sealed it, so old envelopes still open while their key is kept in the key
 * ring passed to `decryptCard`; fingerprints are keyed by the current key and change when it rotates.
 *
 * Plain functions; nothing here logs, and errors never carry key or card material.
 */
import { Data, Either } from "effect"
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto"
import { decodeBase64Strict } from "../../shared/base64.ts"

const AAD_PREFIX = "acp-delegate-vault/card/v1"
const IV_BYTES = 12
const TAG_BYTES = 16

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

export class VaultDecryptError extends Data.TaggedError("VaultDecryptError")<{
  /** `unknown_key`: no key for `key_id`; `malformed`: bad base64 / lengths / JSON; `authentication_failed`: tampered, wrong key or wrong AAD. */
  readonly reason: "unknown_key" | "malformed" | "authentication_failed"
  readonly keyId: string
}> {
  override get message(): string {
    return `cannot decrypt card envelope (key ${this.keyId}): ${this.reason}`
  }
}

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
