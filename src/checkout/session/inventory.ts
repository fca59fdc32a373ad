/**
 * The stock rules, decided here and nowhere else: when a reservation counts against the stock,
 * what is available to a session, whether requested units fit. Stores lock, read and write what
 * they are told. The one exception is the one-statement create of the SQL store, which must decide
 * "fits" inside the statement to stay atomic without holding locks between round trips; a property
 * test (`test/checkout/stock-fits.property.test.ts`) requires its answers to equal `reservationsFit`.
 */
import type { Reservations } from "./session.ts"

/** Units of one product held by a session until `expiresAt` (epoch ms): one reservation row. */
export interface HeldUnits {
  readonly sessionId: string
  readonly quantity: number
  readonly expiresAt: number
}

/** A reservation counts against the stock until its expiry: at `now` only while `now < expiresAt`. */
export const isLive = (expiresAt: number, now: number): boolean => now < expiresAt

/**
 * Units of a product held at `now` by the live reservations of sessions other than `forSession`
 * (every session's when `forSession` is undefined).
 */
export const heldByOthers = (held: Iterable<HeldUnits>, now: number, forSession?: string): number => {
  let units = 0
  for (const row of held) if (row.sessionId !== forSession && isLive(row.expiresAt, now)) units += row.quantity
  return units
}

/** Units of a product available to `forSession` at `now`: on hand minus what others' live reservations hold. */
export const availableTo = (onHand: number, held: Iterable<HeldUnits>, now: number, forSession: string): number =>
  onHand - heldByOthers(held, now, forSession)

/** Whether `units` of a product fit in what is available of it (`undefined`: no stock row, nothing). */
export const unitsFit = (units: number, available: number | undefined): boolean => units <= (available ?? 0)

/** Whether every reservation fits in what is available to the session. */
export const reservationsFit = (reservations: Reservations, available: ReadonlyMap<string, number>): boolean =>
  [...reservations].every(([productId, units]) => unitsFit(units, available.get(productId)))
