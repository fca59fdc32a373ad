/**
 * The vault's card encryption: AES-256-GCM, a random IV each time, the token and key ids as AAD so an envelope cannot
 * move to another token. Keys: `src/platform/key-derivation.ts`. Nothing logs; errors carry no key or card material.
 */
import { Data, Either } from "effect"
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto"
import { decodeBase64Strict } from "../../shared/base64.ts"

const AAD_PREFIX = "acp-delegate-vault/card/v1"
const IV_BYTES = 12
const TAG_BYTES = 16

/** Base64 fields; `iv` 12 bytes, `tag` 16. */
export interface EncryptedEnvelope {
  readonly key_id: string
  readonly iv: string
  readonly ciphertext: string
  readonly tag: string
}

export class VaultDecryptError extends Data.TaggedError("VaultDecryptError")<{
  /** `malformed`: bad base64, lengths or JSON; `authentication_failed`: tampered, wrong key or wrong AAD. */
  readonly reason: "unknown_key" | "malformed" | "authentication_failed"
  readonly keyId: string
}> {
  override get message(): string {
    return `cannot decrypt card envelope (key ${this.keyId}): ${this.reason}`
  }
}

const aadFor = (keyId: string, aad: string): Buffer => Buffer.from(`${AAD_PREFIX}|${keyId}|${aad}`, "utf8")

/** `aad` is the token id the envelope belongs to; `decryptCard` must be given the same. */
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

/** Opens an envelope with the key ring's key of its `key_id` (current and retired keys), checking `aad`. */
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

/** Keyed, so it reveals nothing without the key. To compare fingerprints, pass the expiry always or never. */
export const cardFingerprint = (fingerprintKey: Buffer, number: string, expMonth?: string, expYear?: string): string =>
  createHmac("sha256", fingerprintKey)
    .update(`card|${number}|${expMonth ?? ""}|${expYear ?? ""}`, "utf8")
    .digest("hex")
