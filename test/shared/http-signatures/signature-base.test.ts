import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { HttpMessage } from "../../../src/shared/http-signatures/message.ts"
import {
  type BaseOptions,
  component,
  type ComponentId,
  componentValue,
  signatureBase,
  toComponentId
} from "../../../src/shared/http-signatures/signature-base.ts"
import * as SF from "../../../src/shared/http-signatures/structured-fields.ts"

// The examples of RFC 9421 §2.1 and §2.2, each checked against the value the section gives.

const fields: HttpMessage = {
  method: "GET",
  url: "https://www.example.com/path?param=value",
  headers: {
    "host": "www.example.com",
    "date": "Tue, 20 Apr 2021 02:07:56 GMT",
    "x-ows-header": "   Leading and trailing whitespace.   ",
    "x-obs-fold-header": "Obsolete\r\n    line folding.",
    "cache-control": ["max-age=60", "   must-revalidate"],
    "example-dict": " a=1,    b=2;x=1;y=2,   c=(a   b   c)",
    "x-empty-header": ""
  }
}

const value = (message: HttpMessage, id: string | ComponentId, options: BaseOptions = {}) =>
  componentValue(message, Either.getOrThrow(toComponentId(id)), options)
const valueOf = (message: HttpMessage, id: string | ComponentId, options: BaseOptions = {}) =>
  Either.getOrThrow(value(message, id, options))
const failsFor = (message: HttpMessage, id: string | ComponentId) => Either.isLeft(value(message, id))

describe("HTTP field values (§2.1)", () => {
  it("trims, unfolds obsolete line folding and joins repeated lines with \", \"", () => {
    expect(valueOf(fields, "host")).toBe("www.example.com")
    expect(valueOf(fields, "x-ows-header")).toBe("Leading and trailing whitespace.")
    expect(valueOf(fields, "x-obs-fold-header")).toBe("Obsolete line folding.")
    expect(valueOf(fields, "cache-control")).toBe("max-age=60, must-revalidate")
    expect(valueOf(fields, "example-dict")).toBe("a=1,    b=2;x=1;y=2,   c=(a   b   c)")
    expect(valueOf(fields, "x-empty-header")).toBe("")
  })

  it("finds fields whatever the case of the message's header names", () => {
    expect(valueOf({ headers: { "Content-Type": "text/plain" }, method: "GET", url: "https://a/" }, "content-type"))
      .toBe("text/plain")
  })

  it("sf: re-serializes a structured field strictly (§2.1.1)", () => {
    expect(valueOf(fields, "\"example-dict\";sf", { fieldTypes: { "example-dict": "dictionary" } })).toBe(
      "a=1, b=2;x=1;y=2, c=(a b c)"
    )
    expect(failsFor(fields, "\"example-dict\";sf")).toBe(true) // type unknown
  })

  it("key: one dictionary member, serialized strictly (§2.1.2)", () => {
    const message: HttpMessage = { ...fields, headers: { "example-dict": "  a=1, b=2;x=1;y=2, c=(a   b    c), d" } }
    expect(valueOf(message, component("example-dict", { key: "a" }))).toBe("1")
    expect(valueOf(message, component("example-dict", { key: "d" }))).toBe("?1")
    expect(valueOf(message, component("example-dict", { key: "b" }))).toBe("2;x=1;y=2")
    expect(valueOf(message, component("example-dict", { key: "c" }))).toBe("(a b c)")
    expect(failsFor(message, component("example-dict", { key: "e" }))).toBe(true)
  })

  it("bs: each line as a byte sequence, which tells one line from two (§2.1.3)", () => {
    const two: HttpMessage = { ...fields, headers: { "example-header": ["value, with, lots", "of, commas"] } }
    const one: HttpMessage = { ...fields, headers: { "example-header": "value, with, lots, of, commas" } }
    expect(valueOf(two, "example-header")).toBe("value, with, lots, of, commas")
    expect(valueOf(one, "example-header")).toBe("value, with, lots, of, commas")
    expect(valueOf(two, "\"example-header\";bs")).toBe(":dmFsdWUsIHdpdGgsIGxvdHM=:, :b2YsIGNvbW1hcw==:")
    expect(valueOf(one, "\"example-header\";bs")).toBe(":dmFsdWUsIHdpdGgsIGxvdHMsIG9mLCBjb21tYXM=:")
    expect(failsFor(one, "\"example-header\";bs;sf")).toBe(true)
  })

  it("refuses absent fields, trailers, unknown parameters, uppercase names and values with a newline", () => {
    expect(failsFor(fields, "x-absent")).toBe(true)
    expect(failsFor(fields, "\"date\";tr")).toBe(true)
    expect(failsFor(fields, "\"date\";foo")).toBe(true)
    expect(failsFor(fields, "\"date\";name=\"x\"")).toBe(true)
    expect(failsFor(fields, "Date")).toBe(true)
    expect(failsFor({ ...fields, headers: { "x-nl": "a\nb" } }, "x-nl")).toBe(true)
    expect(failsFor({ ...fields, headers: { "x-utf8": "café" } }, "x-utf8")).toBe(true)
  })
})

describe("derived components (§2.2)", () => {
  const post: HttpMessage = { method: "POST", url: "https://www.example.com/path?param=value", headers: {} }

  it("derives method, target URI, authority, scheme, request target and path", () => {
    expect(valueOf(post, "@method")).toBe("POST")
    expect(valueOf(post, "@target-uri")).toBe("https://www.example.com/path?param=value")
    expect(valueOf(post, "@authority")).toBe("www.example.com")
    expect(valueOf({ ...post, url: "http://www.example.com/path?param=value" }, "@scheme")).toBe("http")
    expect(valueOf(post, "@request-target")).toBe("/path?param=value")
    expect(valueOf(post, "@path")).toBe("/path")
  })

  it("normalizes the authority (lowercase host, no default port) and an empty path", () => {
    expect(valueOf({ ...post, url: "https://WWW.Example.COM:443" }, "@authority")).toBe("www.example.com")
    expect(valueOf({ ...post, url: "https://www.example.com:8443/" }, "@authority")).toBe("www.example.com:8443")
    expect(valueOf({ ...post, url: "https://www.example.com" }, "@path")).toBe("/")
  })

  it("keeps the method's case", () => {
    expect(valueOf({ ...post, method: "patch" }, "@method")).toBe("patch")
  })

  it("@query: the query with its \"?\", percent-encoding kept; \"?\" alone when there is none", () => {
    const q = (url: string) => valueOf({ ...post, url }, "@query")
    expect(q("https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman")).toBe(
      "?param=value&foo=bar&baz=bat%2Dman"
    )
    expect(q("https://www.example.com/path?queryString")).toBe("?queryString")
    expect(q("https://www.example.com/path")).toBe("?")
  })

  it("@query-param: one named parameter, decoded then re-encoded", () => {
    const get: HttpMessage = { ...post, url: "https://www.example.com/path?param=value&foo=bar&baz=batman&qux=" }
    expect(valueOf(get, component("@query-param", { name: "baz" }))).toBe("batman")
    expect(valueOf(get, component("@query-param", { name: "qux" }))).toBe("")
    expect(valueOf(get, component("@query-param", { name: "param" }))).toBe("value")
    const odd: HttpMessage = {
      ...post,
      url: "https://www.example.com/parameters?var=this%20is%20a%20big%0Amultiline%20value"
        + "&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something"
    }
    expect(valueOf(odd, component("@query-param", { name: "var" }))).toBe("this%20is%20a%20big%0Amultiline%20value")
    expect(valueOf(odd, component("@query-param", { name: "bar" }))).toBe("with%20plus%20whitespace")
    expect(valueOf(odd, component("@query-param", { name: "fa%C3%A7ade%22%3A%20" }))).toBe("something")
  })

  it("@query-param: refuses a missing or repeated parameter, or no name", () => {
    const get: HttpMessage = { ...post, url: "https://www.example.com/path?a=1&a=2&b=3" }
    expect(failsFor(get, component("@query-param", { name: "a" }))).toBe(true)
    expect(failsFor(get, component("@query-param", { name: "c" }))).toBe(true)
    expect(failsFor(get, "@query-param")).toBe(true)
  })

  it("@status on responses only, request components on requests only (or with req)", () => {
    const response: HttpMessage = { status: 200, headers: { "content-type": "text/plain" }, request: post }
    expect(valueOf(response, "@status")).toBe("200")
    expect(failsFor(post, "@status")).toBe(true)
    expect(failsFor(response, "@method")).toBe(true)
    expect(valueOf(response, component("@method", { req: true }))).toBe("POST")
    expect(valueOf(response, component("@path", { req: true }))).toBe("/path")
    expect(failsFor(response, component("@status", { req: true }))).toBe(true)
    expect(failsFor(post, component("@method", { req: true }))).toBe(true)
    expect(failsFor({ status: 200, headers: {} }, component("@method", { req: true }))).toBe(true)
    expect(failsFor({ status: 20, headers: {} }, "@status")).toBe(true)
  })

  it("refuses unknown derived components, @signature-params and field parameters on derived ones", () => {
    expect(failsFor(post, "@foo")).toBe(true)
    expect(failsFor(post, "@signature-params")).toBe(true)
    expect(failsFor(post, "\"@method\";sf")).toBe(true)
    expect(failsFor(post, component("@path", { key: "a" }))).toBe(true)
    expect(failsFor({ ...post, url: "not a url" }, "@path")).toBe(true)
    expect(failsFor({ method: "GET", headers: {} }, "@authority")).toBe(true)
  })
})

describe("signatureBase (§2.5)", () => {
  const message: HttpMessage = {
    method: "GET",
    url: "https://example.com/a?b=c",
    headers: { "date": "Tue, 20 Apr 2021 02:07:56 GMT", "x": "1" }
  }
  const input = (items: ReadonlyArray<ComponentId>, params: SF.Parameters = new Map()) =>
    SF.innerList(items.map((c) => SF.item(SF.string(c.name), c.params)), params)

  it("writes one line per component and the @signature-params line last, without a final newline", () => {
    const base = Either.getOrThrow(
      signatureBase(
        message,
        input([component("@method"), component("date")], new Map([["created", SF.integer(1)]]))
      )
    )
    expect(base.base).toBe(
      "\"@method\": GET\n\"date\": Tue, 20 Apr 2021 02:07:56 GMT\n\"@signature-params\": (\"@method\" \"date\");created=1"
    )
    expect(base.signatureParams).toBe("(\"@method\" \"date\");created=1")
  })

  it("covers nothing but its parameters when the list is empty", () => {
    expect(Either.getOrThrow(signatureBase(message, input([]))).base).toBe("\"@signature-params\": ()")
  })

  it("refuses a component covered twice, whatever the order of its parameters", () => {
    expect(Either.isLeft(signatureBase(message, input([component("x"), component("x")])))).toBe(true)
    const a: ComponentId = { name: "x", params: new Map([["bs", SF.boolean(true)], ["req", SF.boolean(true)]]) }
    const b: ComponentId = { name: "x", params: new Map([["req", SF.boolean(true)], ["bs", SF.boolean(true)]]) }
    expect(Either.isLeft(signatureBase({ status: 200, headers: {}, request: message }, input([a, b])))).toBe(true)
    // The same name with other parameters is another component.
    expect(Either.isRight(signatureBase(message, input([component("x"), component("x", { bs: true })])))).toBe(true)
  })

  it("refuses a component that is not a string", () => {
    const bad = SF.innerList([SF.item(SF.token("date"))])
    expect(Either.isLeft(signatureBase(message, bad))).toBe(true)
  })
})
