/**
 * Capability negotiation (overview, "Intersection Algorithm" and "Response Capability Selection"):
 * the business (server) selects, from the capabilities both profiles declare, the highest version
 * both list, then drops every extension none of whose parents survived, repeatedly, so chains of
 * extensions fall with their root. An extension is kept only when a chain of kept parents leads from
 * it to a root capability (one without `extends`): for extensions that do not extend one another in
 * a circle this is exactly the spec's repeated pruning, and a circle of extensions with no root
 * under it is dropped too, as none of its dependencies is really satisfied.
 */
import { CART_CAPABILITY, CHECKOUT_CAPABILITY, ORDER_CAPABILITY, type Registry } from "../profile/platform-profile.ts"

/** What negotiation reads of a capability entry: its version and its parents. */
export interface CapabilityDeclaration {
  readonly version: string
  readonly extends?: string | ReadonlyArray<string> | undefined
}

export interface ActiveCapability<B extends CapabilityDeclaration, P extends CapabilityDeclaration> {
  readonly name: string
  /** The highest version both parties list for the capability. */
  readonly version: string
  /** The business entry's parents at that version (the server's declaration decides); empty for a root. */
  readonly parents: ReadonlyArray<string>
  /** Whether the capability is an extension (declares `extends`, even an empty list). */
  readonly extension: boolean
  readonly business: B
  readonly platform: P
}

/** Active capabilities by name (own keys only). */
export type ActiveCapabilities<
  B extends CapabilityDeclaration = CapabilityDeclaration,
  P extends CapabilityDeclaration = CapabilityDeclaration
> = Readonly<Record<string, ActiveCapability<B, P>>>

export const parentsOf = (declaration: CapabilityDeclaration): ReadonlyArray<string> =>
  declaration.extends === undefined
    ? []
    : typeof declaration.extends === "string"
    ? [declaration.extends]
    : declaration.extends

const own = <A>(registry: Registry<A>, name: string): ReadonlyArray<A> | undefined =>
  Object.hasOwn(registry, name) ? registry[name] : undefined

/** Dates `YYYY-MM-DD` order as strings, so the greatest string is the latest release. */
const highest = (versions: Iterable<string>): string | undefined => {
  let best: string | undefined
  for (const version of versions) if (best === undefined || version > best) best = version
  return best
}

/** Keeps the capabilities a chain of kept parents ties to a root capability. */
const grounded = <B extends CapabilityDeclaration, P extends CapabilityDeclaration>(
  candidates: ReadonlyArray<ActiveCapability<B, P>>
): ReadonlyArray<ActiveCapability<B, P>> => {
  const kept = new Set(candidates.filter((c) => !c.extension).map((c) => c.name))
  let pending = candidates.filter((c) => c.extension)
  for (let added = true; added;) {
    added = false
    const waiting: Array<ActiveCapability<B, P>> = []
    for (const candidate of pending) {
      if (candidate.parents.some((parent) => kept.has(parent))) {
        kept.add(candidate.name)
        added = true
      } else {
        waiting.push(candidate)
      }
    }
    pending = waiting
  }
  return candidates.filter((c) => kept.has(c.name))
}

/**
 * The spec's intersection of the business's and the platform's capability registries: for each name
 * both declare, the highest version both list (a name with no common version is left out), then the
 * orphaned extensions pruned. Of several entries with the selected version, each party's first is used.
 */
export const intersectCapabilities = <B extends CapabilityDeclaration, P extends CapabilityDeclaration>(
  business: Registry<B>,
  platform: Registry<P>
): ActiveCapabilities<B, P> => {
  const candidates: Array<ActiveCapability<B, P>> = []
  for (const name of Object.keys(business).sort()) {
    const ours = business[name]!
    const theirs = own(platform, name)
    if (theirs === undefined) continue
    const theirVersions = new Set(theirs.map((entry) => entry.version))
    const version = highest(ours.map((entry) => entry.version).filter((v) => theirVersions.has(v)))
    if (version === undefined) continue
    const businessEntry = ours.find((entry) => entry.version === version)!
    const platformEntry = theirs.find((entry) => entry.version === version)!
    candidates.push({
      name,
      version,
      parents: parentsOf(businessEntry),
      extension: businessEntry.extends !== undefined,
      business: businessEntry,
      platform: platformEntry
    })
  }
  return Object.fromEntries(grounded(candidates).map((capability) => [capability.name, capability]))
}

/** The root capability of each kind of operation ("Root Capability Relevance"). */
export const OPERATION_ROOTS = {
  checkout: CHECKOUT_CAPABILITY,
  cart: CART_CAPABILITY,
  order: ORDER_CAPABILITY
} as const

export type Operation = keyof typeof OPERATION_ROOTS

/**
 * The active capabilities relevant to an operation whose root capability is `root`: the root itself
 * and every extension with a relevant parent (an extension of a relevant extension is relevant, as the
 * intersection keeps chains). Empty when the root is not active: the operation is
 * `capabilities_incompatible`.
 */
export const selectForRoot = <B extends CapabilityDeclaration, P extends CapabilityDeclaration>(
  active: ActiveCapabilities<B, P>,
  root: string
): ActiveCapabilities<B, P> => {
  if (!Object.hasOwn(active, root)) return {}
  const relevant = new Set([root])
  const all = Object.values(active)
  for (let added = true; added;) {
    added = false
    for (const capability of all) {
      if (!relevant.has(capability.name) && capability.parents.some((parent) => relevant.has(parent))) {
        relevant.add(capability.name)
        added = true
      }
    }
  }
  return Object.fromEntries(all.filter((c) => relevant.has(c.name)).map((c) => [c.name, c]))
}

export const selectForOperation = <B extends CapabilityDeclaration, P extends CapabilityDeclaration>(
  active: ActiveCapabilities<B, P>,
  operation: Operation
): ActiveCapabilities<B, P> => selectForRoot(active, OPERATION_ROOTS[operation])

/** The `ucp.capabilities` of a response: each active capability with its negotiated version. */
export const responseCapabilities = (
  active: ActiveCapabilities
): Readonly<Record<string, ReadonlyArray<{ readonly version: string }>>> =>
  Object.fromEntries(Object.values(active).map((c) => [c.name, [{ version: c.version }]]))
