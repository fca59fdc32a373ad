/** Which addresses a fetch named by a stranger may reach: parsing, and the kind of each special range. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  type AddressKind,
  classifyAddress,
  isIpLiteral,
  parseIpv4,
  parseIpv6
} from "../../src/ucp/network/public-address.ts"

const kinds: ReadonlyArray<readonly [string, AddressKind]> = [
  // IPv4
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["100.64.0.1", "shared"],
  ["100.127.255.255", "shared"],
  ["100.128.0.1", "public"],
  ["100.63.255.255", "public"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link_local"],
  ["172.15.255.255", "public"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["172.32.0.1", "public"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.55", "documentation"],
  ["192.88.99.1", "reserved"],
  ["192.168.0.1", "private"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  ["198.20.0.1", "public"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["224.0.0.251", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "reserved"],
  ["8.8.8.8", "public"],
  ["93.184.215.14", "public"],
  ["1.1.1.1", "public"],
  // IPv6
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "link_local"],
  ["::ffff:8.8.8.8", "public"],
  ["::127.0.0.1", "reserved"],
  ["64:ff9b::10.0.0.1", "private"],
  ["64:ff9b::8.8.8.8", "public"],
  ["64:ff9b:1::1", "reserved"],
  ["100::1", "reserved"],
  ["2001::1", "reserved"],
  ["2001:2::1", "benchmarking"],
  ["2001:db8::1", "documentation"],
  ["2002:7f00:1::1", "reserved"],
  ["3fff::1", "documentation"],
  ["fc00::1", "unique_local"],
  ["fd12:3456:789a::1", "unique_local"],
  ["fe80::1", "link_local"],
  ["febf::1", "link_local"],
  ["fec0::1", "reserved"],
  ["ff02::1", "multicast"],
  ["4000::1", "reserved"],
  ["5f00::1", "reserved"],
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001:81b::200e", "public"],
  ["[::1]", "loopback"],
  ["[2606:4700:4700::1111]", "public"]
]

describe("address kinds", () => {
  it.each(kinds)("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind)
  })

  it("a name, or something that is not an address, has no kind", () => {
    for (const text of ["localhost", "example.com", "1.2.3", "1.2.3.4.5", "256.0.0.1", "01.2.3.4", "1.2.3.04", ""]) {
      expect(classifyAddress(text), text).toBeUndefined()
      expect(isIpLiteral(text), text).toBe(false)
    }
    for (
      const text of [":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "fe80::1%eth0", "::ffff:1.2.3", "1.2.3.4::"]
    ) {
      expect(parseIpv6(text), text).toBeUndefined()
    }
  })
})

describe("parsing", () => {
  it("IPv4 dotted quads round-trip", () => {
    fc.assert(fc.property(fc.ipV4(), (address) => {
      const value = parseIpv4(address)!
      expect([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".")).toBe(address)
    }))
  })

  it("IPv6 in every spelling fast-check knows parses to its eight groups", () => {
    fc.assert(fc.property(fc.ipV6(), (address) => {
      const value = parseIpv6(address)
      expect(value).toBeDefined()
      // The URL parser's normal form names the same address.
      const normal = new URL(`http://[${address}]/`).hostname.slice(1, -1)
      expect(parseIpv6(normal)).toBe(value)
    }))
  })

  it("every IPv4 address and its IPv4-mapped IPv6 form have one kind", () => {
    fc.assert(fc.property(fc.ipV4(), (address) => {
      expect(classifyAddress(`::ffff:${address}`)).toBe(classifyAddress(address))
    }))
  })
})
