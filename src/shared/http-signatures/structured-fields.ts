/**
 * Structured Field Values for HTTP (RFC 8941): the parsing and serialization algorithms of its §4, followed
 * step by step and strictly. Parsing and serializing never throw: a failure is a `StructuredFieldError`.
 * Types are RFC 8941's (Integer, Decimal, String, Token, Byte Sequence, Boolean); no Date or Display String.
 */
import { Data, Either } from "effect"

export type BareItem =
  | { readonly _tag: "Integer"; readonly value: number }
  | { readonly _tag: "Decimal"; readonly value: number }
  | { readonly _tag: "String"; readonly value: string }
  | { readonly _tag: "Token"; readonly value: string }
  | { readonly _tag: "ByteSequence"; readonly value: Uint8Array }
  | { readonly _tag: "Boolean"; readonly value: boolean }

/** Ordered; a key repeated in a parsed value keeps its first position and its last value (§4.2.3.2). */
export type Parameters = ReadonlyMap<string, BareItem>

export interface Item {
  readonly _tag: "Item"
  readonly value: BareItem
  readonly params: Parameters
}

export interface InnerList {
  readonly _tag: "InnerList"
  readonly items: ReadonlyArray<Item>
  readonly params: Parameters
}

export type Member = Item | InnerList
export type List = ReadonlyArray<Member>
export type Dictionary = ReadonlyMap<string, Member>

export class StructuredFieldError extends Data.TaggedError("StructuredFieldError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `structured field: ${this.reason}`
  }
}

export const integer = (value: number): BareItem => ({ _tag: "Integer", value })
export const decimal = (value: number): BareItem => ({ _tag: "Decimal", value })
export const string = (value: string): BareItem => ({ _tag: "String", value })
export const token = (value: string): BareItem => ({ _tag: "Token", value })
export const byteSequence = (value: Uint8Array): BareItem => ({ _tag: "ByteSequence", value })
export const boolean = (value: boolean): BareItem => ({ _tag: "Boolean", value })

const noParams: Parameters = new Map()

export const item = (value: BareItem, params: Parameters = noParams): Item => ({ _tag: "Item", value, params })
export const innerList = (items: ReadonlyArray<Item>, params: Parameters = noParams): InnerList => ({
  _tag: "InnerList",
  items,
  params
})

// ---------------------------------------------------------------------------------------------------------
// Parsing (§4.2). One cursor over the input; every step either advances it or fails.

/** Thrown only inside this module and caught by the entry points, so that failure stays a value outside. */
class Fail {
  constructor(readonly reason: string) {}
}

const isDigit = (c: string) => c >= "0" && c <= "9"
const isLcAlpha = (c: string) => c >= "a" && c <= "z"
const isAlpha = (c: string) => isLcAlpha(c) || (c >= "A" && c <= "Z")
// tchar of RFC 9110 §5.6.2.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/
const isTchar = (c: string) => TCHAR.test(c)
const isKeyChar = (c: string) => isLcAlpha(c) || isDigit(c) || c === "_" || c === "-" || c === "." || c === "*"
const BASE64 = /^[A-Za-z0-9+/=]*$/

class Parser {
  private i = 0
  constructor(private readonly s: string) {}

  get done(): boolean {
    return this.i >= this.s.length
  }
  private peek(): string {
    return this.s.charAt(this.i)
  }
  private skipSP(): void {
    while (this.peek() === " ") this.i++
  }
  private skipOWS(): void {
    while (this.peek() === " " || this.peek() === "\t") this.i++
  }

  /** Top level (§4.2 steps 1, 5 and 6): leading and trailing SP allowed, nothing else left over. */
  top<A>(parse: () => A): A {
    this.skipSP()
    const out = parse()
    this.skipSP()
    if (!this.done) throw new Fail(`unexpected "${this.peek()}" at ${this.i}`)
    return out
  }

  list(): List {
    const members: Array<Member> = []
    while (!this.done) {
      members.push(this.itemOrInnerList())
      this.skipOWS()
      if (this.done) return members
      if (this.s[this.i++] !== ",") throw new Fail(`expected "," at ${this.i - 1}`)
      this.skipOWS()
      if (this.done) throw new Fail("trailing comma")
    }
    return members
  }

  dictionary(): Dictionary {
    const dict = new Map<string, Member>()
    while (!this.done) {
      const key = this.key()
      let member: Member
      if (this.peek() === "=") {
        this.i++
        member = this.itemOrInnerList()
      } else {
        member = item(boolean(true), this.parameters())
      }
      dict.set(key, member)
      this.skipOWS()
      if (this.done) return dict
      if (this.s[this.i++] !== ",") throw new Fail(`expected "," at ${this.i - 1}`)
      this.skipOWS()
      if (this.done) throw new Fail("trailing comma")
    }
    return dict
  }

  itemOrInnerList(): Member {
    return this.peek() === "(" ? this.innerList() : this.item()
  }

  innerList(): InnerList {
    if (this.s[this.i++] !== "(") throw new Fail(`expected "(" at ${this.i - 1}`)
    const items: Array<Item> = []
    while (!this.done) {
      this.skipSP()
      if (this.peek() === ")") {
        this.i++
        return innerList(items, this.parameters())
      }
      items.push(this.item())
      const c = this.peek()
      if (c !== " " && c !== ")") throw new Fail(`expected " " or ")" at ${this.i}`)
    }
    throw new Fail("inner list not closed")
  }

  item(): Item {
    const value = this.bareItem()
    return item(value, this.parameters())
  }

  bareItem(): BareItem {
    const c = this.peek()
    if (c === "-" || isDigit(c)) return this.number()
    if (c === "\"") return string(this.string())
    if (isAlpha(c) || c === "*") return token(this.token())
    if (c === ":") return byteSequence(this.byteSequence())
    if (c === "?") return boolean(this.boolean())
    throw new Fail(this.done ? "expected an item, found the end" : `unexpected "${c}" at ${this.i}`)
  }

  parameters(): Parameters {
    const params = new Map<string, BareItem>()
    while (this.peek() === ";") {
      this.i++
      this.skipSP()
      const key = this.key()
      let value: BareItem = boolean(true)
      if (this.peek() === "=") {
        this.i++
        value = this.bareItem()
      }
      params.set(key, value)
    }
    return params
  }

  key(): string {
    const c = this.peek()
    if (!(isLcAlpha(c) || c === "*")) throw new Fail(this.done ? "expected a key" : `bad key start "${c}"`)
    const start = this.i
    while (!this.done && isKeyChar(this.peek())) this.i++
    return this.s.slice(start, this.i)
  }

  number(): BareItem {
    let sign = 1
    if (this.peek() === "-") {
      this.i++
      sign = -1
    }
    if (this.done) throw new Fail("empty integer")
    if (!isDigit(this.peek())) throw new Fail(`expected a digit at ${this.i}`)
    let decimalPoint = -1
    const start = this.i
    while (!this.done) {
      const c = this.peek()
      if (isDigit(c)) {
        this.i++
      } else if (decimalPoint < 0 && c === ".") {
        if (this.i - start > 12) throw new Fail("decimal with more than 12 integer digits")
        decimalPoint = this.i
        this.i++
      } else {
        break
      }
      const length = this.i - start
      if (decimalPoint < 0 && length > 15) throw new Fail("integer with more than 15 digits")
      if (decimalPoint >= 0 && length > 16) throw new Fail("decimal with more than 16 characters")
    }
    const text = this.s.slice(start, this.i)
    if (decimalPoint < 0) return integer(sign * Number(text))
    if (text.endsWith(".")) throw new Fail("decimal ending in \".\"")
    if (this.i - decimalPoint - 1 > 3) throw new Fail("decimal with more than 3 fraction digits")
    return decimal(sign * Number(text))
  }

  string(): string {
    if (this.s[this.i++] !== "\"") throw new Fail("expected a string")
    let out = ""
    while (!this.done) {
      const c = this.s[this.i++]!
      if (c === "\\") {
        if (this.done) throw new Fail("string ends in a backslash")
        const next = this.s[this.i++]!
        if (next !== "\"" && next !== "\\") throw new Fail("bad escape in string")
        out += next
      } else if (c === "\"") {
        return out
      } else {
        const code = c.charCodeAt(0)
        if (code < 0x20 || code > 0x7e) throw new Fail("string with a character outside VCHAR and SP")
        out += c
      }
    }
    throw new Fail("string not closed")
  }

  token(): string {
    const c = this.peek()
    if (!(isAlpha(c) || c === "*")) throw new Fail("expected a token")
    const start = this.i
    while (!this.done) {
      const d = this.peek()
      if (!(isTchar(d) || d === ":" || d === "/")) break
      this.i++
    }
    return this.s.slice(start, this.i)
  }

  byteSequence(): Uint8Array {
    if (this.s[this.i++] !== ":") throw new Fail("expected a byte sequence")
    const end = this.s.indexOf(":", this.i)
    if (end < 0) throw new Fail("byte sequence not closed")
    const content = this.s.slice(this.i, end)
    this.i = end + 1
    if (!BASE64.test(content)) throw new Fail("byte sequence with a character outside base64")
    // Padding may be left out (§4.2.7), but "=" elsewhere, or padding of the wrong length, is not base64.
    const unpadded = content.replace(/=+$/, "")
    const padding = content.length - unpadded.length
    const badPadding = padding > 2 || (padding > 0 && content.length % 4 !== 0)
    if (unpadded.includes("=") || unpadded.length % 4 === 1 || badPadding) {
      throw new Fail("byte sequence that is not base64")
    }
    return new Uint8Array(Buffer.from(unpadded, "base64"))
  }

  boolean(): boolean {
    if (this.s[this.i++] !== "?") throw new Fail("expected a boolean")
    const c = this.s[this.i++]
    if (c === "1") return true
    if (c === "0") return false
    throw new Fail("boolean neither ?0 nor ?1")
  }
}

const NON_ASCII = /[\u0080-\uffff]/

const run = <A>(input: string, parse: (p: Parser) => A): Either.Either<A, StructuredFieldError> => {
  if (NON_ASCII.test(input)) return Either.left(new StructuredFieldError({ reason: "not ASCII" }))
  try {
    const p = new Parser(input)
    return Either.right(p.top(() => parse(p)))
  } catch (e) {
    if (e instanceof Fail) return Either.left(new StructuredFieldError({ reason: e.reason }))
    throw e
  }
}

/** A field value as a Dictionary (§4.2.2); several field lines are joined with "," first (see `combineFieldLines`). */
export const parseDictionary = (input: string): Either.Either<Dictionary, StructuredFieldError> =>
  run(input, (p) => p.dictionary())

export const parseList = (input: string): Either.Either<List, StructuredFieldError> => run(input, (p) => p.list())

export const parseItem = (input: string): Either.Either<Item, StructuredFieldError> => run(input, (p) => p.item())

/** Field lines of one field joined as RFC 9110 §5.3 does before structured parsing. */
export const combineFieldLines = (lines: ReadonlyArray<string>): string => lines.join(", ")

// ---------------------------------------------------------------------------------------------------------
// Serialization (§4.1), strict: the one canonical text of a value.

const MAX_INTEGER = 999_999_999_999_999

const serializeKey = (key: string): string => {
  if (!/^[a-z*][a-z0-9_\-.*]*$/.test(key)) throw new Fail(`bad key "${key}"`)
  return key
}

/** Rounded half to even at three decimal places (§4.1.5 step 2). */
const serializeDecimal = (value: number): string => {
  if (!Number.isFinite(value)) throw new Fail("decimal that is not finite")
  const negative = value < 0
  const scaled = Math.abs(value) * 1000
  const floor = Math.floor(scaled)
  // A tie within binary noise (1.0015 is 1001.4999… thousandths) goes to the even neighbour.
  const tie = Math.abs(scaled - floor - 0.5) < 1e-9
  const thousandths = tie ? floor + (floor % 2) : Math.round(scaled)
  const integerPart = Math.floor(thousandths / 1000)
  if (integerPart > 999_999_999_999) throw new Fail("decimal with more than 12 integer digits")
  const fraction = String(thousandths % 1000).padStart(3, "0").replace(/0+$/, "")
  return `${negative && thousandths !== 0 ? "-" : ""}${integerPart}.${fraction === "" ? "0" : fraction}`
}

const serializeBareItem = (value: BareItem): string => {
  switch (value._tag) {
    case "Integer": {
      if (!Number.isInteger(value.value) || Math.abs(value.value) > MAX_INTEGER) {
        throw new Fail("integer out of range")
      }
      return String(value.value)
    }
    case "Decimal":
      return serializeDecimal(value.value)
    case "String": {
      if (!/^[\x20-\x7e]*$/.test(value.value)) throw new Fail("string with a character outside VCHAR and SP")
      return `"${value.value.replace(/[\\"]/g, (c) => `\\${c}`)}"`
    }
    case "Token": {
      if (!/^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*$/.test(value.value)) throw new Fail("bad token")
      return value.value
    }
    case "ByteSequence":
      return `:${Buffer.from(value.value.buffer, value.value.byteOffset, value.value.byteLength).toString("base64")}:`
    case "Boolean":
      return value.value ? "?1" : "?0"
  }
}

const serializeParams = (params: Parameters): string => {
  let out = ""
  for (const [key, value] of params) {
    out += `;${serializeKey(key)}`
    if (!(value._tag === "Boolean" && value.value)) out += `=${serializeBareItem(value)}`
  }
  return out
}

const serializeItemUnsafe = (it: Item): string => serializeBareItem(it.value) + serializeParams(it.params)

const serializeInnerListUnsafe = (list: InnerList): string =>
  `(${list.items.map(serializeItemUnsafe).join(" ")})${serializeParams(list.params)}`

const serializeMemberUnsafe = (member: Member): string =>
  member._tag === "InnerList" ? serializeInnerListUnsafe(member) : serializeItemUnsafe(member)

const guard = <A>(value: A, serialize: (value: A) => string): Either.Either<string, StructuredFieldError> => {
  try {
    return Either.right(serialize(value))
  } catch (e) {
    if (e instanceof Fail) return Either.left(new StructuredFieldError({ reason: e.reason }))
    throw e
  }
}

export const serializeItem = (value: Item): Either.Either<string, StructuredFieldError> =>
  guard(value, serializeItemUnsafe)

export const serializeInnerList = (value: InnerList): Either.Either<string, StructuredFieldError> =>
  guard(value, serializeInnerListUnsafe)

/** An Item or an Inner List with its parameters: a Dictionary member's value without its key. */
export const serializeMember = (value: Member): Either.Either<string, StructuredFieldError> =>
  guard(value, serializeMemberUnsafe)

export const serializeList = (value: List): Either.Either<string, StructuredFieldError> =>
  guard(value, (list) => list.map(serializeMemberUnsafe).join(", "))

export const serializeDictionary = (value: Dictionary): Either.Either<string, StructuredFieldError> =>
  guard(value, (dict) => {
    const parts: Array<string> = []
    for (const [key, member] of dict) {
      const k = serializeKey(key)
      parts.push(
        member._tag === "Item" && member.value._tag === "Boolean" && member.value.value
          ? k + serializeParams(member.params)
          : `${k}=${serializeMemberUnsafe(member)}`
      )
    }
    return parts.join(", ")
  })
