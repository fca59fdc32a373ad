/**
 * What a stored session shows and holds at a given time: an active session past its idle deadline
 * shows `expired`; an active session holds stock for its items.
 */
import { isActive, type Reservations, type Session } from "./session.ts"
/** Whether `session` is active but its idle deadline has passed at `now` (`now >= expires_at`). */
export const isExpiredAt = (session: Pick<Session, "status" | "expires_at">, now: number): boolean =>
  isActive(session.status) && now >= Date.parse(session.expires_at)

/** The session as seen at `now`: an active session past its deadline shows status `expired`. */
export const view = (session: Session, now: number): Session =>
  isExpiredAt(session, now) ? { ...session, status: "expired" } : session

/** Units per product of the session's items while it is active; nothing once final. */
export const reservationsOf = (session: Session): Reservations => {
  const reservations = new Map<string, number>()
  if (isActive(session.status)) {
    for (const item of session.items) reservations.set(item.id, (reservations.get(item.id) ?? 0) + item.quantity)
  }
  return reservations
}

/** A session's reservations and coupon holds count until its idle deadline (epoch ms). */
export const holdsUntil = (session: Pick<Session, "expires_at">): number => Date.parse(session.expires_at)
