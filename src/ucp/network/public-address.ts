/**
 * Which IP addresses an outbound fetch named by a stranger may reach: only globally routable unicast
 * ones. Every other range of the IANA special-purpose registries is refused by kind (loopback,
 * private, link-local, unique-local, CGNAT, multicast, unspecified, benchmarking, documentation,
 * reserved). An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:0:0/96`, NAT64
 * `64:ff9b::/96`) is judged by the IPv4 address it reaches. IPv6 outside `2000::/3`, the only block
 * allocated for global unicast, is reserved.
 */

export type AddressKind =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "link_local"
  | "unique_local"
  | "shared"
  | "multicast"
  | "benchmarking"
  | "documentation"
  | "reserved"

/** The words a refusal uses: the kind only, never the address (a name's resolution is not the caller's business). */
export const ADDRESS_KIND_WORDS: Record<Exclude<AddressKind, "public">, string> = {
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  private: "a private address",
  link_local: "a link-local address",
  unique_local: "a unique-local address",
  shared: "a shared (CGNAT) address",
  multicast: "a multicast address",
  benchmarking: "a benchmarking address",
  documentation: "a documentation address",
  reserved: "a reserved address"
}

const octet = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
const dottedQuad = new RegExp(`^${octet}\\.${octet}\\.${octet}\\.${octet}$`)

/** A dotted-quad IPv4 address as an unsigned 32-bit number (no leading zeros, no shorter forms). */
export const parseIpv4 = (text: string): number | undefined => {
  const match = dottedQuad.exec(text)
  if (match === null) return undefined
  return ((Number(match[1]) << 24) >>> 0) + (Number(match[2]) << 16) + (Number(match[3]) << 8) + Number(match[4])
}

const hexGroup = /^[0-9a-fA-F]{1,4}$/

/** An IPv6 address (no brackets, no zone) as a 128-bit number; an IPv4 tail (`::ffff:1.2.3.4`) is accepted. */
export const parseIpv6 = (text: string): bigint | undefined => {
  if (text.length > 45 || text.includes("%")) return undefined
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (half: string, last: boolean): Array<number> | undefined => {
    if (half === "") return []
    const parts = half.split(":")
    const groups: Array<number> = []
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (last && i === parts.length - 1 && part.includes(".")) {
        const v4 = parseIpv4(part)
        if (v4 === undefined) return undefined
        groups.push(v4 >>> 16, v4 & 0xffff)
      } else if (hexGroup.test(part)) {
        groups.push(parseInt(part, 16))
      } else {
        return undefined
      }
    }
    return groups
  }
  const compressed = halves.length === 2
  const head = groupsOf(halves[0]!, !compressed)
  const tail = compressed ? groupsOf(halves[1]!, true) : []
  if (head === undefined || tail === undefined) return undefined
  const present = head.length + tail.length
  if (compressed ? present > 7 : present !== 8) return undefined
  const groups = [...head, ...Array<number>(8 - present).fill(0), ...tail]
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n)
}

type Range<N> = readonly [base: N, bits: number, kind: Exclude<AddressKind, "public">]

const v4 = (text: string): number => parseIpv4(text)!

// Most specific first where ranges nest.
const IPV4_RANGES: ReadonlyArray<Range<number>> = [
  [v4("0.0.0.0"), 8, "unspecified"],
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "shared"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link_local"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "reserved"],
  [v4("192.0.2.0"), 24, "documentation"],
  [v4("192.88.99.0"), 24, "reserved"],
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "benchmarking"],
  [v4("198.51.100.0"), 24, "documentation"],
  [v4("203.0.113.0"), 24, "documentation"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("240.0.0.0"), 4, "reserved"]
]

const inV4 = (address: number, [base, bits]: Range<number>): boolean =>
  bits === 0 || (address >>> (32 - bits)) === (base >>> (32 - bits))

export const classifyIpv4 = (address: number): AddressKind =>
  IPV4_RANGES.find((range) => inV4(address, range))?.[2] ?? "public"

const v6 = (text: string): bigint => parseIpv6(text)!

const IPV6_RANGES: ReadonlyArray<Range<bigint>> = [
  [v6("::"), 128, "unspecified"],
  [v6("::1"), 128, "loopback"],
  [v6("::"), 96, "reserved"], // IPv4-compatible, deprecated
  [v6("64:ff9b:1::"), 48, "reserved"], // local-use NAT64
  [v6("100::"), 64, "reserved"], // discard-only
  [v6("2001:2::"), 48, "benchmarking"],
  [v6("2001:db8::"), 32, "documentation"],
  [v6("2001::"), 23, "reserved"], // IETF protocol assignments, Teredo among them
  [v6("2002::"), 16, "reserved"], // 6to4
  [v6("3fff::"), 20, "documentation"],
  [v6("fc00::"), 7, "unique_local"],
  [v6("fe80::"), 10, "link_local"],
  [v6("fec0::"), 10, "reserved"], // site-local, deprecated
  [v6("ff00::"), 8, "multicast"]
]

const inV6 = (address: bigint, [base, bits]: Range<bigint>): boolean => {
  const shift = BigInt(128 - bits)
  return (address >> shift) === (base >> shift)
}

const MAPPED = v6("::ffff:0:0")
const NAT64 = v6("64:ff9b::")
const GLOBAL_UNICAST: Range<bigint> = [v6("2000::"), 3, "reserved"]

export const classifyIpv6 = (address: bigint): AddressKind => {
  // The IPv4 address a mapped or NAT64 one reaches decides.
  if (inV6(address, [MAPPED, 96, "reserved"]) || inV6(address, [NAT64, 96, "reserved"])) {
    return classifyIpv4(Number(address & 0xffffffffn))
  }
  const special = IPV6_RANGES.find((range) => inV6(address, range))
  if (special !== undefined) return special[2]
  return inV6(address, GLOBAL_UNICAST) ? "public" : "reserved"
}

/** An IP literal's kind (IPv6 with or without brackets); undefined when `text` is not an IP address. */
export const classifyAddress = (text: string): AddressKind | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const four = parseIpv4(bare)
  if (four !== undefined) return classifyIpv4(four)
  const six = parseIpv6(bare)
  return six === undefined ? undefined : classifyIpv6(six)
}

/** Whether `text` is an IP literal rather than a name. */
export const isIpLiteral = (text: string): boolean => classifyAddress(text) !== undefined
