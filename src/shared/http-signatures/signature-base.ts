/**
 * The signature base of RFC 9421 §2.5: one line per covered component, `"name";params: value`, then the
 * `"@signature-params"` line. Component values follow §2.1 (HTTP fields) and §2.2 (derived components);
 * anything that cannot be derived is an error, never an empty or guessed value.
 */
import { Either } from "effect"
import { SignatureBaseError } from "./errors.ts"
import { headerLines, type HttpMessage, isResponse } from "./message.ts"
import * as SF from "./structured-fields.ts"

/** A component identifier: a lowercase field name or `@`-derived name, with its parameters in order. */
export interface ComponentId {
  readonly name: string
  readonly params: SF.Parameters
}

export interface ComponentParams {
  readonly req?: boolean
  readonly sf?: boolean
  readonly bs?: boolean
  readonly tr?: boolean
  readonly key?: string
  readonly name?: string
}

/** `component("@query-param", { name: "Pet" })`, `component("content-digest", { req: true })`; order is kept. */
export const component = (name: string, params: ComponentParams = {}): ComponentId => {
  const map = new Map<string, SF.BareItem>()
  for (const [key, value] of Object.entries(params)) {
    if (value === true) map.set(key, SF.boolean(true))
    else if (typeof value === "string") map.set(key, SF.string(value))
  }
  return { name, params: map }
}

/** A bare name (`"@method"`, `"content-type"`) or a serialized identifier (`"\"@query-param\";name=\"Pet\""`). */
export type ComponentInput = string | ComponentId

export const toComponentId = (input: ComponentInput): Either.Either<ComponentId, SignatureBaseError> => {
  if (typeof input !== "string") return Either.right(input)
  if (!input.startsWith("\"")) return Either.right({ name: input, params: new Map() })
  const parsed = SF.parseItem(input)
  if (Either.isLeft(parsed) || parsed.right.value._tag !== "String") {
    return Either.left(new SignatureBaseError({ reason: `bad component identifier ${JSON.stringify(input)}` }))
  }
  return Either.right({ name: parsed.right.value.value, params: parsed.right.params })
}

export const componentItem = (id: ComponentId): SF.Item => SF.item(SF.string(id.name), id.params)

/** `"name";a;b=1`, the identifier as it appears in the signature base and in Signature-Input. */
export const serializeComponentId = (id: ComponentId): Either.Either<string, SignatureBaseError> =>
  Either.mapLeft(SF.serializeItem(componentItem(id)), (e) => new SignatureBaseError({ reason: e.reason }))

/** Two identifiers are the same when name and parameters are, whatever the parameters' order (§2). */
const identity = (id: ComponentId): string =>
  JSON.stringify([
    id.name,
    [...id.params].map(([k, v]) => [k, v._tag, v._tag === "ByteSequence" ? [...v.value] : v.value]).sort()
  ])

/** Field types known to be structured, for the `sf` parameter; others come from `BaseOptions.fieldTypes`. */
const knownFieldTypes: { readonly [name: string]: FieldType } = {
  "signature-input": "dictionary",
  "signature": "dictionary",
  "accept-signature": "dictionary",
  "content-digest": "dictionary",
  "repr-digest": "dictionary",
  "want-content-digest": "dictionary",
  "want-repr-digest": "dictionary",
  "ucp-agent": "dictionary",
  "priority": "dictionary",
  "cache-status": "list",
  "proxy-status": "list"
}

export type FieldType = "dictionary" | "list" | "item"

export interface BaseOptions {
  /** Structured types of further fields, for components with `sf`. */
  readonly fieldTypes?: { readonly [name: string]: FieldType }
}

const fail = (reason: string) => Either.left(new SignatureBaseError({ reason }))

const DERIVED = new Set([
  "@method",
  "@target-uri",
  "@authority",
  "@scheme",
  "@request-target",
  "@path",
  "@query",
  "@query-param",
  "@status"
])

/** Trim, and replace obsolete line folding by one space (§2.1 steps 2 and 3). */
const canonicalLine = (line: string): string => line.replace(/\r?\n[ \t]+/g, " ").replace(/^[ \t]+|[ \t]+$/g, "")

// "percent-encode after encoding" with the application/x-www-form-urlencoded percent-encode set, spaces as
// %20 (§2.2.8): everything but ASCII alphanumerics and *-._ is encoded, byte by byte of the UTF-8.
const formEncode = (text: string): string => {
  let out = ""
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9*\-._]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

const parseUrl = (message: HttpMessage): URL | undefined => {
  if (message.url === undefined) return undefined
  try {
    return new URL(message.url)
  } catch {
    return undefined
  }
}

const derivedValue = (ctx: HttpMessage, id: ComponentId): Either.Either<string, SignatureBaseError> => {
  if (id.name === "@status") {
    if (!isResponse(ctx)) return fail("@status of a request")
    const status = ctx.status!
    if (!Number.isInteger(status) || status < 100 || status > 999) return fail("@status is not a 3-digit code")
    return Either.right(String(status))
  }
  if (isResponse(ctx)) return fail(`${id.name} of a response (it needs req)`)
  if (id.name === "@method") {
    return ctx.method === undefined || ctx.method === "" ? fail("no method") : Either.right(ctx.method)
  }
  const url = parseUrl(ctx)
  if (url === undefined) return fail("no valid target URI")
  const path = url.pathname === "" ? "/" : url.pathname
  switch (id.name) {
    case "@target-uri":
      return Either.right(`${url.protocol}//${url.host}${path}${url.search}`)
    case "@authority":
      return Either.right(url.host)
    case "@scheme":
      return Either.right(url.protocol.slice(0, -1).toLowerCase())
    case "@request-target":
      return Either.right(`${path}${url.search}`)
    case "@path":
      return Either.right(path)
    case "@query":
      return Either.right(`?${url.search.slice(1)}`)
    case "@query-param": {
      const name = id.params.get("name")
      if (name?._tag !== "String") return fail("@query-param needs a string name")
      const values: Array<string> = []
      for (const [n, v] of new URLSearchParams(url.search)) {
        if (formEncode(n) === name.value) values.push(v)
      }
      if (values.length !== 1) {
        return fail(`query parameter ${JSON.stringify(name.value)} occurs ${values.length} times, not once`)
      }
      return Either.right(formEncode(values[0]!))
    }
    default:
      return fail(`unknown derived component ${id.name}`)
  }
}

const reserialize = (
  text: string,
  type: FieldType
): Either.Either<string, SF.StructuredFieldError> =>
  type === "dictionary"
    ? Either.flatMap(SF.parseDictionary(text), SF.serializeDictionary)
    : type === "list"
    ? Either.flatMap(SF.parseList(text), SF.serializeList)
    : Either.flatMap(SF.parseItem(text), SF.serializeItem)

const fieldValue = (
  ctx: HttpMessage,
  id: ComponentId,
  options: BaseOptions
): Either.Either<string, SignatureBaseError> => {
  if (id.params.has("tr")) return fail("trailer fields are not supported")
  const lines = headerLines(ctx, id.name)
  if (lines === undefined) return fail(`field ${id.name} is absent`)
  const canonical = lines.map(canonicalLine)
  const key = id.params.get("key")
  const sf = id.params.has("sf")
  if (id.params.has("bs")) {
    if (sf || key !== undefined) return fail("bs cannot be combined with sf or key")
    const list = canonical.map((line) => SF.item(SF.byteSequence(new Uint8Array(Buffer.from(line, "latin1")))))
    return Either.mapLeft(SF.serializeList(list), (e) => new SignatureBaseError({ reason: e.reason }))
  }
  const combined = canonical.join(", ")
  if (key !== undefined) {
    if (key._tag !== "String") return fail("key must be a string")
    const dict = SF.parseDictionary(combined)
    if (Either.isLeft(dict)) return fail(`field ${id.name} is not a dictionary`)
    const member = dict.right.get(key.value)
    if (member === undefined) return fail(`field ${id.name} has no member ${JSON.stringify(key.value)}`)
    return Either.mapLeft(SF.serializeMember(member), (e) => new SignatureBaseError({ reason: e.reason }))
  }
  if (sf) {
    const type = options.fieldTypes?.[id.name] ?? knownFieldTypes[id.name]
    if (type === undefined) return fail(`field ${id.name} has no known structured type`)
    return Either.mapLeft(
      reserialize(combined, type),
      () => new SignatureBaseError({ reason: `field ${id.name} is not a valid ${type}` })
    )
  }
  return Either.right(combined)
}

const FLAGS = new Set(["req", "sf", "bs", "tr"])

const checkParams = (id: ComponentId): string | undefined => {
  const derived = id.name.startsWith("@")
  for (const [key, value] of id.params) {
    if (FLAGS.has(key)) {
      if (value._tag !== "Boolean" || !value.value) return `parameter ${key} must be a flag`
      if (derived && key !== "req") return `parameter ${key} does not apply to ${id.name}`
    } else if (key === "key") {
      if (derived) return `parameter key does not apply to ${id.name}`
    } else if (key === "name") {
      if (id.name !== "@query-param") return `parameter name does not apply to ${id.name}`
    } else {
      return `unknown parameter ${key}`
    }
  }
  return undefined
}

/** The value of one covered component in the message (its request when `req` is set). */
export const componentValue = (
  message: HttpMessage,
  id: ComponentId,
  options: BaseOptions = {}
): Either.Either<string, SignatureBaseError> => {
  const bad = checkParams(id)
  if (bad !== undefined) return fail(bad)
  if (id.name === "@signature-params") return fail("@signature-params cannot be covered")
  const derived = id.name.startsWith("@")
  if (derived && !DERIVED.has(id.name)) return fail(`unknown derived component ${id.name}`)
  if (!derived && !/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(id.name)) return fail(`bad field name ${JSON.stringify(id.name)}`)
  let ctx = message
  if (id.params.has("req")) {
    if (!isResponse(message)) return fail("req in a request signature")
    if (message.request === undefined) return fail("req without the request")
    ctx = message.request
  }
  const value = derived ? derivedValue(ctx, id) : fieldValue(ctx, id, options)
  return Either.flatMap(value, (v) =>
    /^[\x20-\x7e\t]*$/.test(v)
      ? Either.right(v)
      : fail(`${id.name} has a value with a newline, control or non-ASCII character`))
}

export interface SignatureBase {
  /** The bytes to sign or verify, as an ASCII string. */
  readonly base: string
  /** The `@signature-params` value, which is also the Signature-Input member value. */
  readonly signatureParams: string
  readonly components: ReadonlyArray<ComponentId>
}

/**
 * The signature base for the covered components and signature parameters of `input`, an Inner List of
 * component identifiers (as in Signature-Input). Duplicate identifiers and underivable components fail.
 */
export const signatureBase = (
  message: HttpMessage,
  input: SF.InnerList,
  options: BaseOptions = {}
): Either.Either<SignatureBase, SignatureBaseError> => {
  const lines: Array<string> = []
  const seen = new Set<string>()
  const components: Array<ComponentId> = []
  for (const it of input.items) {
    if (it.value._tag !== "String") return fail("a covered component is not a string")
    const id: ComponentId = { name: it.value.value, params: it.params }
    const key = identity(id)
    if (seen.has(key)) return fail(`component ${id.name} is covered twice`)
    seen.add(key)
    const serialized = serializeComponentId(id)
    if (Either.isLeft(serialized)) return Either.left(serialized.left)
    const value = componentValue(message, id, options)
    if (Either.isLeft(value)) return Either.left(value.left)
    lines.push(`${serialized.right}: ${value.right}`)
    components.push(id)
  }
  const params = SF.serializeInnerList(input)
  if (Either.isLeft(params)) return fail(params.left.reason)
  lines.push(`"@signature-params": ${params.right}`)
  return Either.right({ base: lines.join("\n"), signatureParams: params.right, components })
}
