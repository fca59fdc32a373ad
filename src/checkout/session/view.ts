/** What a stored session shows and holds at a given time. */
import { isActive, type Reservations, type Session } from "./session.ts"
export const isExpiredAt = (session: Pick<Session, "status" | "expires_at">, now: number): boolean =>
  isActive(session.status) && now >= Date.parse(session.expires_at)

export const view = (session: Session, now: number): Session =>
  isExpiredAt(session, now) ? { ...session, status: "expired" } : session

export const reservationsOf = (session: Session): Reservations => {
  const reservations = new Map<string, number>()
  if (isActive(session.status)) {
    for (const item of session.items) reservations.set(item.id, (reservations.get(item.id) ?? 0) + item.quantity)
  }
  return reservations
}

/** Reservations and coupon holds count until the session's idle deadline. */
export const holdsUntil = (session: Pick<Session, "expires_at">): number => Date.parse(session.expires_at)
