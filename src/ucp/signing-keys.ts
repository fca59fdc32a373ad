/**
 * The business's UCP signing keys, from the configuration (`UCP_SIGNING_KEYS`, or the generated one):
 * the key that signs, and every key's public JWK for `/.well-known/ucp`. Private members never leave
 * this module but inside the KeyObject a signature is made with.
 */
import { Context, Effect, Either, Layer, Redacted } from "effect"
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from "node:crypto"
import { AppConfig } from "../platform/config.ts"
import type { SignatureKey } from "../shared/http-signatures/algorithms.ts"
import { fromKeyObject } from "../shared/http-signatures/keys.ts"

export interface UcpSigningKeysShape {
  /** The key `UCP_SIGNING_KEY_ID` names. */
  readonly signing: { readonly kid: string; readonly privateKey: KeyObject; readonly curve: "P-256" | "P-384" }
  /** The same key for RFC 9421 signatures (its `keyid` the `kid`). */
  readonly signatureKey: SignatureKey
  /** Every configured key, public members only, as `signing_keys` lists them. */
  readonly published: ReadonlyArray<Readonly<Record<string, string>>>
}

export class UcpSigningKeys extends Context.Tag("ucp/UcpSigningKeys")<UcpSigningKeys, UcpSigningKeysShape>() {}

const algorithmOf = (curve: string) => (curve === "P-384" ? "ES384" : "ES256")

export const UcpSigningKeysLive = Layer.effect(
  UcpSigningKeys,
  Effect.map(AppConfig, ({ ucpSigning }) => {
    const keys = ucpSigning.keys.map((key) => {
      const jwk = JSON.parse(Redacted.value(key.jwk)) as JsonWebKey
      const privateKey = createPrivateKey({ key: jwk, format: "jwk" })
      const { crv, kty, x, y } = createPublicKey(privateKey).export({ format: "jwk" })
      const curve = crv === "P-384" ? "P-384" as const : "P-256" as const
      return {
        kid: key.kid,
        privateKey,
        curve,
        published: { kid: key.kid, kty: kty!, crv: crv!, x: x!, y: y!, use: "sig", alg: algorithmOf(curve) }
      }
    })
    const signing = keys.find((key) => key.kid === ucpSigning.signingKeyId)!
    const algorithm = signing.curve === "P-384" ? "ecdsa-p384-sha384" as const : "ecdsa-p256-sha256" as const
    // The configuration checked the key's curve: it fits its algorithm.
    const signatureKey = Either.getOrThrow(fromKeyObject(signing.privateKey, algorithm, signing.kid))
    return UcpSigningKeys.of({
      signing: { kid: signing.kid, privateKey: signing.privateKey, curve: signing.curve },
      signatureKey,
      published: keys.map((key) => key.published)
    })
  })
)
