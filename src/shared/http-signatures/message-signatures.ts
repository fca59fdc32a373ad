/**
 * Creating and verifying HTTP message signatures (RFC 9421 §3, §4): `Signature-Input` and `Signature` are
 * Dictionaries keyed by label. Pure: the clock is an input (`created`, `now`), keys come from the caller.
 */
import { Either } from "effect"
import {
  isSignatureAlgorithm,
  type SignatureAlgorithm,
  signatureAlgorithms,
  type SignatureKey,
  signBytes,
  verifyBytes
} from "./algorithms.ts"
import { verifyContentDigest, type VerifyDigestOptions } from "./content-digest.ts"
import { HttpSignatureError, SignatureBaseError, type SignatureErrorCode, SignatureKeyError } from "./errors.ts"
import { bodyBytes, hasBody, headerValue, type HttpMessage } from "./message.ts"
import {
  type BaseOptions,
  type ComponentId,
  type ComponentInput,
  componentItem,
  signatureBase,
  toComponentId
} from "./signature-base.ts"
import * as SF from "./structured-fields.ts"

export interface SignParams extends BaseOptions {
  /** The covered components, in the order they are signed. */
  readonly components: ReadonlyArray<ComponentInput>
  /** The Dictionary key in both fields; `sig1` by default. */
  readonly label?: string
  /** UNIX seconds; RFC 9421 recommends it, UCP makes it optional. */
  readonly created?: number
  readonly expires?: number
  /** Defaults to the key's own keyid. */
  readonly keyid?: string
  readonly nonce?: string
  readonly tag?: string
  /** Adds `alg`; off by default, as UCP derives the algorithm from the key and omits it. */
  readonly includeAlg?: boolean
}

/** The two field values to add to the message. */
export interface SignatureHeaders {
  readonly "signature-input": string
  readonly "signature": string
}

const baseError = (reason: string) => new SignatureBaseError({ reason })

/** The Inner List of a signature: components, then `created`, `keyid`, `alg`, `expires`, `nonce`, `tag`. */
export const signatureInput = (
  params: SignParams,
  key: SignatureKey
): Either.Either<SF.InnerList, SignatureBaseError> => {
  const items: Array<SF.Item> = []
  for (const input of params.components) {
    const id = toComponentId(input)
    if (Either.isLeft(id)) return Either.left(id.left)
    items.push(componentItem(id.right))
  }
  const meta = new Map<string, SF.BareItem>()
  const keyid = params.keyid ?? key.keyid
  if (params.created !== undefined) meta.set("created", SF.integer(params.created))
  if (keyid !== undefined) meta.set("keyid", SF.string(keyid))
  if (params.includeAlg === true) meta.set("alg", SF.string(key.algorithm))
  if (params.expires !== undefined) meta.set("expires", SF.integer(params.expires))
  if (params.nonce !== undefined) meta.set("nonce", SF.string(params.nonce))
  if (params.tag !== undefined) meta.set("tag", SF.string(params.tag))
  for (const name of ["created", "expires"] as const) {
    const value = params[name]
    if (value !== undefined && !Number.isSafeInteger(value)) return Either.left(baseError(`${name} is not an integer`))
  }
  return Either.right(SF.innerList(items, meta))
}

/** Signs the message: the `signature-input` and `signature` values for one label (`sig1` by default). */
export const sign = (
  message: HttpMessage,
  params: SignParams,
  key: SignatureKey
): Either.Either<SignatureHeaders, SignatureBaseError | SignatureKeyError> => {
  const label = params.label ?? "sig1"
  if (!/^[a-z*][a-z0-9_\-.*]*$/.test(label)) return Either.left(baseError(`bad label ${JSON.stringify(label)}`))
  const input = signatureInput(params, key)
  if (Either.isLeft(input)) return Either.left(input.left)
  const base = signatureBase(message, input.right, params)
  if (Either.isLeft(base)) return Either.left(base.left)
  const signature = signBytes(key, Buffer.from(base.right.base, "ascii"))
  if (Either.isLeft(signature)) return Either.left(signature.left)
  return Either.right({
    "signature-input": `${label}=${base.right.signatureParams}`,
    "signature": `${label}=:${Buffer.from(signature.right).toString("base64")}:`
  })
}

/** One labelled signature as found in a message. */
export interface ParsedSignature {
  readonly label: string
  readonly input: SF.InnerList
  readonly components: ReadonlyArray<ComponentId>
  readonly signature: Uint8Array
  readonly created?: number
  readonly expires?: number
  readonly keyid?: string
  readonly alg?: string
  readonly nonce?: string
  readonly tag?: string
}

const failure = (code: SignatureErrorCode, reason: string) => Either.left(new HttpSignatureError({ code, reason }))

/** A value from the message, as a reason quotes it: bounded, since the sender chose it. */
const quoted = (text: string): string => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text)

const parseOne = (
  label: string,
  input: SF.Member,
  value: SF.Member | undefined
): Either.Either<ParsedSignature, HttpSignatureError> => {
  if (value === undefined) return failure("signature_invalid", `Signature has no ${quoted(label)}`)
  if (input._tag !== "InnerList") {
    return failure("signature_invalid", `Signature-Input ${quoted(label)} is not an inner list`)
  }
  if (value._tag !== "Item" || value.value._tag !== "ByteSequence") {
    return failure("signature_invalid", `Signature ${quoted(label)} is not a byte sequence`)
  }
  const components: Array<ComponentId> = []
  for (const it of input.items) {
    if (it.value._tag !== "String") return failure("signature_invalid", "a covered component is not a string")
    components.push({ name: it.value.value, params: it.params })
  }
  // Parameters of the registry are type-checked; others are kept (they are signed) and not interpreted.
  const fields: { created?: number; expires?: number; keyid?: string; alg?: string; nonce?: string; tag?: string } = {}
  for (const [name, param] of input.params) {
    if (name === "created" || name === "expires") {
      if (param._tag !== "Integer") return failure("signature_invalid", `${name} is not an integer`)
      fields[name] = param.value
    } else if (name === "keyid" || name === "alg" || name === "nonce" || name === "tag") {
      if (param._tag !== "String") return failure("signature_invalid", `${name} is not a string`)
      fields[name] = param.value
    }
  }
  return Either.right({ label, input, components, signature: value.value.value, ...fields })
}

/**
 * Every signature of the message, in Signature-Input order; `signature_missing` when there is none, and
 * `signature_invalid` when either field, or any of its members, is malformed.
 */
export const parseSignatures = (
  message: HttpMessage
): Either.Either<ReadonlyArray<ParsedSignature>, HttpSignatureError> => {
  const inputHeader = headerValue(message, "signature-input")
  const signatureHeader = headerValue(message, "signature")
  if (inputHeader === undefined || signatureHeader === undefined || inputHeader.trim() === "") {
    return failure("signature_missing", "no Signature-Input and Signature")
  }
  const inputs = SF.parseDictionary(inputHeader)
  if (Either.isLeft(inputs)) return failure("signature_invalid", "Signature-Input is not a dictionary")
  const values = SF.parseDictionary(signatureHeader)
  if (Either.isLeft(values)) return failure("signature_invalid", "Signature is not a dictionary")
  const out: Array<ParsedSignature> = []
  for (const [label, input] of inputs.right) {
    const parsed = parseOne(label, input, values.right.get(label))
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    out.push(parsed.right)
  }
  // Both fields carry the same labels (§4): a value without its input is an error too.
  for (const label of values.right.keys()) {
    if (!inputs.right.has(label)) return failure("signature_invalid", `Signature-Input has no ${quoted(label)}`)
  }
  if (out.length === 0) return failure("signature_missing", "Signature-Input is empty")
  return Either.right(out)
}

export interface VerifyOptions extends BaseOptions {
  /** The key for a keyid, or `undefined` when it is not known (→ `key_not_found`). */
  readonly resolveKey: (keyid: string, signature: ParsedSignature) => SignatureKey | undefined
  /** The algorithms accepted; all of the registry by default. */
  readonly algorithms?: ReadonlyArray<SignatureAlgorithm>
  /** Components the signature must cover (same name and parameters). */
  readonly requiredComponents?: ReadonlyArray<ComponentInput>
  /** The label to verify; by default the first of Signature-Input. */
  readonly label?: string
  /** The current time in UNIX seconds; without it no time is checked. */
  readonly now?: number
  /** With `now`: `created` is required and at most this old. */
  readonly maxAgeSeconds?: number
  /** With `now`: how far in the future `created` may be (clocks differ); 60 s by default. */
  readonly clockSkewSeconds?: number
  /** The `tag` the signature must carry. */
  readonly tag?: string
  /** For the Content-Digest of a message whose signature covers `content-digest`. */
  readonly digest?: VerifyDigestOptions
}

export interface VerifiedSignature extends ParsedSignature {
  readonly algorithm: SignatureAlgorithm
}

const sameComponent = (a: ComponentId, b: ComponentId): boolean => {
  if (a.name !== b.name || a.params.size !== b.params.size) return false
  for (const [key, value] of a.params) {
    const other = b.params.get(key)
    if (other === undefined || other._tag !== value._tag) return false
    if (value._tag !== "ByteSequence" && other.value !== value.value) return false
  }
  return true
}

export const coversComponent = (components: ReadonlyArray<ComponentId>, id: ComponentId): boolean =>
  components.some((c) => sameComponent(c, id))

const checkTime = (sig: ParsedSignature, options: VerifyOptions): string | undefined => {
  if (options.now === undefined) return options.maxAgeSeconds === undefined ? undefined : "maxAgeSeconds needs now"
  const now = options.now
  if (sig.expires !== undefined && now > sig.expires) return "the signature has expired"
  if (sig.created !== undefined && sig.created > now + (options.clockSkewSeconds ?? 60)) {
    return "the signature is created in the future"
  }
  if (options.maxAgeSeconds !== undefined) {
    if (sig.created === undefined) return "the signature has no created"
    if (now - sig.created > options.maxAgeSeconds) return "the signature is too old"
  }
  return undefined
}

/** Checks every covered Content-Digest (the message's own, or its request's with `req`) against its body. */
const checkDigests = (
  message: HttpMessage,
  sig: ParsedSignature,
  options: VerifyOptions
): Either.Either<void, HttpSignatureError> => {
  for (const id of sig.components) {
    if (id.name !== "content-digest") continue
    const target = id.params.has("req") ? message.request : message
    if (target === undefined) continue
    if (!hasBody(target) && headerValue(target, "content-digest") === undefined) continue
    const checked = verifyContentDigest(headerValue(target, "content-digest"), bodyBytes(target), options.digest)
    if (Either.isLeft(checked)) return Either.left(checked.left)
  }
  return Either.right(undefined)
}

/**
 * Verifies one signature of the message (RFC 9421 §3.2) with the application's requirements: coverage,
 * time, key, algorithm, Content-Digest, then the cryptographic check. Returns what was verified.
 */
export const verify = (
  message: HttpMessage,
  options: VerifyOptions
): Either.Either<VerifiedSignature, HttpSignatureError> => {
  const all = parseSignatures(message)
  if (Either.isLeft(all)) return Either.left(all.left)
  const sig = options.label === undefined ? all.right[0]! : all.right.find((s) => s.label === options.label)
  if (sig === undefined) return failure("signature_missing", `no signature labelled ${quoted(options.label ?? "")}`)
  const allowed = options.algorithms ?? signatureAlgorithms
  if (sig.alg !== undefined && (!isSignatureAlgorithm(sig.alg) || !allowed.includes(sig.alg))) {
    return failure("algorithm_unsupported", `algorithm ${quoted(sig.alg)} is not supported`)
  }
  for (const input of options.requiredComponents ?? []) {
    const id = toComponentId(input)
    if (Either.isLeft(id)) return failure("signature_invalid", id.left.reason)
    if (!coversComponent(sig.components, id.right)) {
      return failure("signature_invalid", `the signature does not cover ${quoted(id.right.name)}`)
    }
  }
  if (options.tag !== undefined && sig.tag !== options.tag) return failure("signature_invalid", "wrong tag")
  const late = checkTime(sig, options)
  if (late !== undefined) return failure("signature_invalid", late)
  if (sig.keyid === undefined) return failure("key_not_found", "the signature has no keyid")
  const key = options.resolveKey(sig.keyid, sig)
  if (key === undefined) return failure("key_not_found", `no key ${quoted(sig.keyid)}`)
  if (!allowed.includes(key.algorithm)) {
    return failure("algorithm_unsupported", `algorithm ${key.algorithm} is not supported`)
  }
  if (sig.alg !== undefined && sig.alg !== key.algorithm) {
    return failure("signature_invalid", `alg ${quoted(sig.alg)} is not the algorithm of key ${quoted(sig.keyid)}`)
  }
  const digests = checkDigests(message, sig, options)
  if (Either.isLeft(digests)) return Either.left(digests.left)
  const base = signatureBase(message, sig.input, options)
  if (Either.isLeft(base)) return failure("signature_invalid", base.left.reason)
  if (!verifyBytes(key, Buffer.from(base.right.base, "ascii"), sig.signature)) {
    return failure("signature_invalid", `the signature does not verify with key ${quoted(sig.keyid)}`)
  }
  return Either.right({ ...sig, algorithm: key.algorithm })
}

/** The message with a further signature: its values appended to any Signature-Input and Signature present. */
export const withSignature = (message: HttpMessage, headers: SignatureHeaders): HttpMessage => {
  const append = (name: keyof SignatureHeaders) => {
    const existing = headerValue(message, name)
    return existing === undefined || existing.trim() === "" ? headers[name] : `${existing}, ${headers[name]}`
  }
  const replaced = Object.entries(message.headers).filter(([name]) => {
    const lower = name.toLowerCase()
    return lower !== "signature-input" && lower !== "signature"
  })
  return {
    ...message,
    headers: {
      ...Object.fromEntries(replaced),
      "signature-input": append("signature-input"),
      "signature": append("signature")
    }
  }
}
