/** Keys derived from `VAULT_KEY` by HKDF-SHA256, one per use under its own label, so no use weakens another. */
import { Data, Either } from "effect"
import { createHash, hkdfSync, randomBytes } from "node:crypto"
import { decodeBase64Strict } from "../shared/base64.ts"

export const ENCRYPTION_INFO = "acp-delegate-vault/card-encryption/aes-256-gcm/v1"
export const FINGERPRINT_INFO = "acp-delegate-vault/card-fingerprint/hmac-sha256/v1"
export const REQUEST_FINGERPRINT_INFO = "acp-idempotency/request-fingerprint/hmac-sha256/v1"
const KEY_BYTES = 32

export interface VaultKeys {
  /** First 8 hex characters of SHA-256 of the raw VAULT_KEY. */
  readonly keyId: string
  readonly encryptionKey: Buffer
  readonly fingerprintKey: Buffer
  /** For the fingerprints of idempotent request bodies, which may hold a card. */
  readonly requestFingerprintKey: Buffer
}

export class VaultKeyError extends Data.TaggedError("VaultKeyError")<{ readonly message: string }> {}

const hkdf = (key: Buffer, info: string): Buffer =>
  Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), Buffer.from(info, "utf8"), KEY_BYTES))

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

export const generateVaultKey = (): string => randomBytes(KEY_BYTES).toString("base64")
