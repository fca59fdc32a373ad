import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import * as SF from "../../../src/shared/http-signatures/structured-fields.ts"

/** Parse, then serialize strictly: the canonical text of a valid value. */
const canonical = (type: "list" | "dictionary" | "item", text: string): string =>
  Either.getOrThrow(
    type === "list"
      ? Either.flatMap(SF.parseList(text), SF.serializeList)
      : type === "dictionary"
      ? Either.flatMap(SF.parseDictionary(text), SF.serializeDictionary)
      : Either.flatMap(SF.parseItem(text), SF.serializeItem)
  )

const fails = (type: "list" | "dictionary" | "item", text: string): boolean =>
  type === "list"
    ? Either.isLeft(SF.parseList(text))
    : type === "dictionary"
    ? Either.isLeft(SF.parseDictionary(text))
    : Either.isLeft(SF.parseItem(text))

describe("RFC 8941 parsing", () => {
  it("parses the bare item types", () => {
    const bare = (text: string) => Either.getOrThrow(SF.parseItem(text)).value
    expect(bare("42")).toEqual(SF.integer(42))
    expect(bare("-42")).toEqual(SF.integer(-42))
    expect(bare("999999999999999")).toEqual(SF.integer(999_999_999_999_999))
    expect(bare("4.5")).toEqual(SF.decimal(4.5))
    expect(bare("-0.125")).toEqual(SF.decimal(-0.125))
    expect(bare("\"hello \\\"world\\\" \\\\\"")).toEqual(SF.string("hello \"world\" \\"))
    expect(bare("foo123/456")).toEqual(SF.token("foo123/456"))
    expect(bare("*foo:bar")).toEqual(SF.token("*foo:bar"))
    expect(bare(":aGVsbG8=:")).toEqual(SF.byteSequence(new Uint8Array(Buffer.from("hello"))))
    expect(bare("::")).toEqual(SF.byteSequence(new Uint8Array(0)))
    expect(bare("?1")).toEqual(SF.boolean(true))
    expect(bare("?0")).toEqual(SF.boolean(false))
  })

  it("parses parameters in order, the last of a repeated key winning in the first one's place", () => {
    const item = Either.getOrThrow(SF.parseItem("abc;a=1;b=2;a=3;c"))
    expect([...item.params]).toEqual([["a", SF.integer(3)], ["b", SF.integer(2)], ["c", SF.boolean(true)]])
  })

  it("parses lists and inner lists with their parameters", () => {
    const list = Either.getOrThrow(SF.parseList("(\"foo\" \"bar\");lvl=5, (\"baz\");lvl=1, ()"))
    expect(list).toHaveLength(3)
    const first = list[0]!
    expect(first._tag).toBe("InnerList")
    if (first._tag === "InnerList") {
      expect(first.items.map((i) => i.value)).toEqual([SF.string("foo"), SF.string("bar")])
      expect(first.params.get("lvl")).toEqual(SF.integer(5))
    }
    expect(Either.getOrThrow(SF.parseList(""))).toEqual([])
  })

  it("parses dictionaries: boolean members without a value, duplicates overwritten in place", () => {
    const dict = Either.getOrThrow(SF.parseDictionary("a=1, b;x=?0, c=(1 2), a=4"))
    expect([...dict.keys()]).toEqual(["a", "b", "c"])
    expect(dict.get("a")).toEqual(SF.item(SF.integer(4)))
    expect(dict.get("b")).toEqual(SF.item(SF.boolean(true), new Map([["x", SF.boolean(false)]])))
  })

  it("allows leading and trailing spaces and tabs around list and dictionary commas", () => {
    expect(canonical("list", "  1 ,\t2,3  ")).toBe("1, 2, 3")
    expect(canonical("dictionary", "a=1 ,\tb=2")).toBe("a=1, b=2")
  })

  it("refuses what the parsing algorithms fail on", () => {
    const bad: ReadonlyArray<readonly ["list" | "dictionary" | "item", string]> = [
      ["item", ""], // empty item
      ["item", "1 2"], // left over
      ["item", "\ta"], // only SP is discarded at the top level
      ["item", "1234567890123456"], // 16-digit integer
      ["item", "1234567890123.0"], // 13 integer digits in a decimal
      ["item", "1.2345"], // 4 fraction digits
      ["item", "1."], // decimal ending in "."
      ["item", "-"], // sign only
      ["item", "\"abc"], // unclosed string
      ["item", "\"a\\b\""], // bad escape
      ["item", "\"é\""], // non-ASCII
      ["item", "\"a\u0007\""], // control character
      ["item", ":aGVsbG8"], // unclosed byte sequence
      ["item", ":aGVs!G8=:"], // not base64
      ["item", ":a=Vs:"], // "=" inside
      ["item", ":aGVsbG8===:"], // too much padding
      ["item", "?2"], // boolean
      ["item", "?"],
      ["item", "a;B=1"], // uppercase parameter key
      ["item", "a;=1"],
      ["item", "(1 2)"], // an inner list is not an item
      ["list", "1,"], // trailing comma
      ["list", "1,,2"],
      ["list", "(1 2"], // unclosed inner list
      ["list", "(1,2)"],
      ["list", "1 2"],
      ["dictionary", "A=1"], // uppercase key
      ["dictionary", "a=1,"],
      ["dictionary", "a=1 b=2"],
      ["dictionary", "1=a"]
    ]
    for (const [type, text] of bad) {
      expect(fails(type, text), `${type} ${JSON.stringify(text)}`).toBe(true)
    }
  })

  it("accepts byte sequences without padding, as parsers SHOULD", () => {
    expect(Either.getOrThrow(SF.parseItem(":aGVsbG8:")).value).toEqual(
      SF.byteSequence(new Uint8Array(Buffer.from("hello")))
    )
  })

  it("never throws, whatever the input", () => {
    fc.assert(
      // The characters the grammar turns on, so that inputs get deep into the parser, and a few others.
      fc.property(
        fc.string({ unit: fc.constantFrom(..."\"(),;=:?*-._/\\ \t019aAzZ+é\u0000".split("")), maxLength: 30 }),
        (text) => {
          SF.parseList(text)
          SF.parseDictionary(text)
          SF.parseItem(text)
        }
      )
    )
  })
})

describe("RFC 8941 serialization", () => {
  it("writes the canonical form", () => {
    expect(canonical("dictionary", "a=1,    b=2;x=1;y=2,   c=(a   b   c)")).toBe("a=1, b=2;x=1;y=2, c=(a b c)")
    expect(canonical("dictionary", "a=?1, b=?0;c")).toBe("a, b=?0;c")
    expect(canonical("item", "1.500")).toBe("1.5")
    expect(canonical("item", "-0")).toBe("0")
    expect(canonical("item", "0.0")).toBe("0.0")
    expect(canonical("item", ":aGVsbG8:")).toBe(":aGVsbG8=:")
    expect(canonical("list", "(  a  b  );q=1")).toBe("(a b);q=1")
  })

  it("rounds decimals to three places, half to even", () => {
    const ser = (n: number) => Either.getOrThrow(SF.serializeItem(SF.item(SF.decimal(n))))
    expect(ser(1.0005)).toBe("1.0")
    expect(ser(1.0015)).toBe("1.002")
    expect(ser(2.5)).toBe("2.5")
    expect(ser(-3.14159)).toBe("-3.142")
  })

  it("refuses values that have no serialization", () => {
    const fail = (value: SF.BareItem) => Either.isLeft(SF.serializeItem(SF.item(value)))
    expect(fail(SF.integer(1e15))).toBe(true)
    expect(fail(SF.integer(1.5))).toBe(true)
    expect(fail(SF.string("é"))).toBe(true)
    expect(fail(SF.string("a\nb"))).toBe(true)
    expect(fail(SF.token("1abc"))).toBe(true)
    expect(fail(SF.decimal(1e13))).toBe(true)
    expect(Either.isLeft(SF.serializeDictionary(new Map([["Bad", SF.item(SF.integer(1))]])))).toBe(true)
  })

  it("round-trips: serialize then parse gives the value back", () => {
    const key = fc.stringMatching(/^[a-z*][a-z0-9_\-.*]{0,5}$/)
    const bare: fc.Arbitrary<SF.BareItem> = fc.oneof(
      fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }).map(SF.integer),
      fc.integer({ min: -999_999_999, max: 999_999_999 }).map((n) => SF.decimal(n / 1000)),
      fc.stringMatching(/^[\x20-\x7e]{0,10}$/).map(SF.string),
      fc.stringMatching(/^[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]{0,8}$/).map(SF.token),
      fc.uint8Array({ maxLength: 12 }).map(SF.byteSequence),
      fc.boolean().map(SF.boolean)
    )
    const params = fc.array(fc.tuple(key, bare), { maxLength: 3 }).map((entries) => new Map(entries))
    const item = fc.tuple(bare, params).map(([v, p]) => SF.item(v, p))
    const member: fc.Arbitrary<SF.Member> = fc.oneof(
      item,
      fc.tuple(fc.array(item, { maxLength: 3 }), params).map(([items, p]) => SF.innerList(items, p))
    )
    fc.assert(
      fc.property(fc.array(fc.tuple(key, member), { maxLength: 4 }), (entries) => {
        const dict = new Map(entries)
        const text = Either.getOrThrow(SF.serializeDictionary(dict))
        const again = Either.getOrThrow(SF.serializeDictionary(Either.getOrThrow(SF.parseDictionary(text))))
        expect(again).toBe(text)
      })
    )
  })
})
