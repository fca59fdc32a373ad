/**
 * UCP's profile of RFC 9421 (signatures.md, REST binding): ES256 (required) or ES384 keys as JWKs, no `alg`
 * parameter, `Content-Digest: sha-256` over the raw body, and the components each message must cover.
 */
import { Either } from "effect"
import type { SignatureAlgorithm, SignatureKey } from "./algorithms.ts"
import { contentDigest } from "./content-digest.ts"
import { HttpSignatureError, type SignatureBaseError, type SignatureKeyError } from "./errors.ts"
import {
  coversComponent,
  type ParsedSignature,
  sign,
  type SignatureHeaders,
  type VerifiedSignature,
  verify
} from "./message-signatures.ts"
import { hasBody, headerValue, type HttpMessage, isResponse, withHeaders } from "./message.ts"
import { component } from "./signature-base.ts"
import * as SF from "./structured-fields.ts"

export const UCP_ALGORITHMS: ReadonlyArray<SignatureAlgorithm> = ["ecdsa-p256-sha256", "ecdsa-p384-sha384"]

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"])

const hasQuery = (message: HttpMessage): boolean => {
  try {
    return message.url !== undefined && new URL(message.url).search !== ""
  } catch {
    return false
  }
}

/**
 * The components a UCP request signature covers: `@method @authority @path`, `@query` with a query,
 * `ucp-agent` when sent, `idempotency-key` for POST/PUT/PATCH/DELETE, `content-digest content-type` with a body.
 */
export const ucpRequestComponents = (message: HttpMessage): ReadonlyArray<string> => {
  const out = ["@method", "@authority", "@path"]
  if (hasQuery(message)) out.push("@query")
  if (headerValue(message, "ucp-agent") !== undefined) out.push("ucp-agent")
  if (STATE_CHANGING.has((message.method ?? "").toUpperCase())) out.push("idempotency-key")
  if (hasBody(message)) out.push("content-digest", "content-type")
  return out
}

/** The components a UCP response signature covers: `@status`, and `content-digest content-type` with a body. */
export const ucpResponseComponents = (message: HttpMessage): ReadonlyArray<string> =>
  hasBody(message) ? ["@status", "content-digest", "content-type"] : ["@status"]

/** `signature_invalid` unless the signature covers every component UCP requires of this message. */
export const checkUcpCoverage = (
  message: HttpMessage,
  signature: ParsedSignature
): Either.Either<void, HttpSignatureError> => {
  const required = isResponse(message) ? ucpResponseComponents(message) : ucpRequestComponents(message)
  const missing = required.filter((name) => !coversComponent(signature.components, component(name)))
  return missing.length === 0
    ? Either.right(undefined)
    : Either.left(
      new HttpSignatureError({ code: "signature_invalid", reason: `the signature does not cover ${missing.join(" ")}` })
    )
}

/**
 * The signer's profile URL from `UCP-Agent: profile="https://…"`, a Dictionary whose `profile` is a String
 * holding an https URL; `undefined` when absent or not so. Whether a business profile's path is
 * `/.well-known/ucp` is the caller's check.
 */
export const ucpAgentProfile = (message: HttpMessage): string | undefined => {
  const header = headerValue(message, "ucp-agent")
  const dict = header === undefined ? undefined : SF.parseDictionary(header)
  if (dict === undefined || Either.isLeft(dict)) return undefined
  const profile = dict.right.get("profile")
  if (profile?._tag !== "Item" || profile.value._tag !== "String") return undefined
  try {
    return new URL(profile.value.value).protocol === "https:" ? profile.value.value : undefined
  } catch {
    return undefined
  }
}

export interface UcpSignOptions {
  readonly key: SignatureKey
  /** Defaults to the key's keyid (the JWK's `kid`). */
  readonly keyid?: string
  readonly created?: number
  readonly label?: string
}

/**
 * Signs a UCP request or response: computes `content-digest` (sha-256) for a body, then signs UCP's
 * components. Returns every header to add, `content-digest` included when there is a body.
 */
export const signUcpMessage = (
  message: HttpMessage,
  options: UcpSignOptions
): Either.Either<SignatureHeaders & { readonly "content-digest"?: string }, SignatureBaseError | SignatureKeyError> => {
  const digest = hasBody(message) ? contentDigest(message.body!, ["sha-256"]) : undefined
  const target = digest === undefined ? message : withHeaders(message, { "content-digest": digest })
  const components = isResponse(target) ? ucpResponseComponents(target) : ucpRequestComponents(target)
  const signed = sign(target, {
    components,
    ...(options.label === undefined ? {} : { label: options.label }),
    ...(options.created === undefined ? {} : { created: options.created }),
    ...(options.keyid === undefined ? {} : { keyid: options.keyid })
  }, options.key)
  return digest === undefined ? signed : Either.map(signed, (headers) => ({ ...headers, "content-digest": digest }))
}

export interface UcpVerifyOptions {
  /** The signer's key for a keyid, from the `signing_keys` of its profile. */
  readonly resolveKey: (keyid: string) => SignatureKey | undefined
  readonly now?: number
  readonly maxAgeSeconds?: number
  readonly label?: string
  /** ES256 and ES384 by default (UCP requires the first, makes the second optional). */
  readonly algorithms?: ReadonlyArray<SignatureAlgorithm>
}

/**
 * Verifies a UCP request or response: the signature, UCP's coverage for this message, and a sha-256
 * `Content-Digest` matching the raw body whenever there is a body.
 */
export const verifyUcpMessage = (
  message: HttpMessage,
  options: UcpVerifyOptions
): Either.Either<VerifiedSignature, HttpSignatureError> =>
  verify(message, {
    resolveKey: (keyid) => options.resolveKey(keyid),
    algorithms: options.algorithms ?? UCP_ALGORITHMS,
    requiredComponents: isResponse(message) ? ucpResponseComponents(message) : ucpRequestComponents(message),
    digest: { required: ["sha-256"] },
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.maxAgeSeconds === undefined ? {} : { maxAgeSeconds: options.maxAgeSeconds }),
    ...(options.label === undefined ? {} : { label: options.label })
  })
