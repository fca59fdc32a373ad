/**
 * The keys this business signs UCP messages with (order webhooks): `UCP_SIGNING_KEYS`, a JSON array of
 * private EC JWKs (P-256 or P-384, each with its `kid`), and `UCP_SIGNING_KEY_ID`, the one that signs
 * (default: the first). Every key of the set is published in `/.well-known/ucp`, so a rotation adds the
 * new key first, switches `UCP_SIGNING_KEY_ID` once caches have the new profile, and removes the old
 * key after the verification grace (docs/ucp.md). Without `UCP_SIGNING_KEYS` a development start
 * generates one P-256 key into `DATA_DIR/secrets.json`; production requires it.
 */
import { Config, Either, Option, Redacted } from "effect"
import { createHash, createPrivateKey, generateKeyPairSync, type JsonWebKey } from "node:crypto"

export interface UcpSigningKey {
  readonly kid: string
  /** The private JWK's JSON text: never logged, never shown. */
  readonly jwk: Redacted.Redacted<string>
}

export interface UcpSigningConfig {
  readonly keys: ReadonlyArray<UcpSigningKey>
  readonly signingKeyId: string
}

const CURVES = new Set(["P-256", "P-384"])

/** A private EC JWK of a supported curve with a `kid`, or why not (never quoting the key). */
export const checkSigningKey = (value: unknown, index: number): Either.Either<UcpSigningKey, string> => {
  const jwk = value as JsonWebKey & { readonly kid?: unknown }
  if (typeof jwk !== "object" || jwk === null) return Either.left(`key ${index} is not a JSON object`)
  if (typeof jwk.kid !== "string" || jwk.kid.trim() === "") return Either.left(`key ${index} has no kid`)
  if (jwk.kty !== "EC" || typeof jwk.crv !== "string" || !CURVES.has(jwk.crv)) {
    return Either.left(`key ${jwk.kid} is not an EC key on P-256 or P-384`)
  }
  if (typeof jwk.d !== "string") return Either.left(`key ${jwk.kid} is not a private key (no d)`)
  try {
    createPrivateKey({ key: jwk, format: "jwk" })
  } catch {
    return Either.left(`key ${jwk.kid} is not a valid EC private key`)
  }
  return Either.right({ kid: jwk.kid, jwk: Redacted.make(JSON.stringify(jwk)) })
}

export const parseSigningKeys = (text: string): Either.Either<ReadonlyArray<UcpSigningKey>, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left("Expected a JSON array of private EC JWKs")
  }
  if (!Array.isArray(json) || json.length === 0) {
    return Either.left("Expected a non-empty JSON array of private EC JWKs")
  }
  const keys: Array<UcpSigningKey> = []
  for (const [index, value] of json.entries()) {
    const key = checkSigningKey(value, index)
    if (Either.isLeft(key)) return Either.left(key.left)
    if (keys.some((other) => other.kid === key.right.kid)) return Either.left(`kid ${key.right.kid} appears twice`)
    keys.push(key.right)
  }
  return Either.right(keys)
}

/** The variables as given; `resolveUcpSigning` adds the generated key when they are absent. */
export const ucpSigningConfig = Config.all({
  keys: Config.option(
    Config.string("UCP_SIGNING_KEYS").pipe(
      Config.validate({
        message: "Expected a JSON array of private EC JWKs (P-256 or P-384), each with a distinct kid",
        validation: (text) => Either.isRight(parseSigningKeys(text))
      }),
      Config.map(Redacted.make)
    )
  ),
  signingKeyId: Config.option(Config.string("UCP_SIGNING_KEY_ID"))
})

export type RawUcpSigning = Config.Config.Success<typeof ucpSigningConfig>

/** A new P-256 key as a private JWK's JSON text, its `kid` from the public key's SHA-256. */
export const generateSigningKey = (): string => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const jwk = privateKey.export({ format: "jwk" })
  const kid = `k_${
    createHash("sha256").update(publicKey.export({ format: "der", type: "spki" })).digest("hex").slice(0, 12)
  }`
  return JSON.stringify({ ...jwk, kid, alg: "ES256", use: "sig" })
}

/** The configured keys, else the generated one; the signing key must be one of them. */
export const resolveUcpSigning = (
  raw: RawUcpSigning,
  generated: string | undefined
): Either.Either<UcpSigningConfig, { readonly variable: string; readonly message: string }> => {
  const text = Option.isSome(raw.keys) ? Redacted.value(raw.keys.value) : generated
  if (text === undefined) return Either.left({ variable: "UCP_SIGNING_KEYS", message: "no UCP signing key" })
  const parsed = parseSigningKeys(Option.isSome(raw.keys) ? text : `[${text}]`)
  if (Either.isLeft(parsed)) return Either.left({ variable: "UCP_SIGNING_KEYS", message: parsed.left })
  const keys = parsed.right
  const signingKeyId = Option.getOrElse(raw.signingKeyId, () => keys[0]!.kid)
  if (!keys.some((key) => key.kid === signingKeyId)) {
    return Either.left({ variable: "UCP_SIGNING_KEY_ID", message: `Expected the kid of one of UCP_SIGNING_KEYS` })
  }
  return Either.right({ keys, signingKeyId })
}
