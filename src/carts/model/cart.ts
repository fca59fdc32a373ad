/** A cart: a basket an agent builds before purchase intent; it holds no stock and has no status. */
import type { Item } from "../../catalog/model/line-items.ts"

export type JsonObject = { readonly [key: string]: unknown }

export interface Cart {
  readonly id: string
  /** In the agent's order, as sent: unknown or unavailable items stay, each with a message. */
  readonly items: ReadonlyArray<Item>
  /** The buyer as the request's wire form gave it (already decoded, so known to be valid). */
  readonly buyer: JsonObject | undefined
  readonly locale: string | undefined
  /** The random token of `continue_url` (the buyer page's capability, never the cart id). */
  readonly handoffToken: string
  /** Checkout sessions the buyer page started from this cart. */
  readonly checkouts: number
  /** Epoch ms, from Effect's Clock. */
  readonly createdAt: number
  readonly updatedAt: number
  /** Absent from this instant on; every successful update moves it `CART_TTL_SECONDS` past the update. */
  readonly expiresAt: number
}

/** What a create or a replacement sets: the items and buyer replace the cart's. */
export interface CartContents {
  readonly items: ReadonlyArray<Item>
  readonly buyer: JsonObject | undefined
}

/** Several lines of one item are one quantity for availability (as in a checkout). */
export const requestedUnits = (items: ReadonlyArray<Item>): ReadonlyMap<string, number> => {
  const units = new Map<string, number>()
  for (const item of items) units.set(item.id, (units.get(item.id) ?? 0) + item.quantity)
  return units
}
