/** The stock rules; the SQL create's own "fits" is held to `reservationsFit` by `stock-fits.property.test.ts`. */
import type { Reservations } from "./session.ts"

/** One reservation row; `expiresAt` in epoch ms. */
export interface HeldUnits {
  readonly sessionId: string
  readonly quantity: number
  readonly expiresAt: number
}

export const isLive = (expiresAt: number, now: number): boolean => now < expiresAt

/** Every session's when `forSession` is undefined. */
export const heldByOthers = (held: Iterable<HeldUnits>, now: number, forSession?: string): number => {
  let units = 0
  for (const row of held) if (row.sessionId !== forSession && isLive(row.expiresAt, now)) units += row.quantity
  return units
}

export const availableTo = (onHand: number, held: Iterable<HeldUnits>, now: number, forSession: string): number =>
  onHand - heldByOthers(held, now, forSession)

/** `undefined`: no stock row, so nothing available. */
export const unitsFit = (units: number, available: number | undefined): boolean => units <= (available ?? 0)

export const reservationsFit = (reservations: Reservations, available: ReadonlyMap<string, number>): boolean =>
  [...reservations].every(([productId, units]) => unitsFit(units, available.get(productId)))
