/**
 * What every command of the session state machine shares: the session after a command as a
 * `Transition`, and the small rules several commands apply the same way (final statuses, details,
 * the buyer after a change). Pure, like the reducer.
 */
import { mergeDetails, type SessionDetails } from "./details.ts"
import type { Buyer, SessionStatus } from "./schemas.ts"
import { isActive, type Reservations, type Session, type Transition } from "./session.ts"
import { reservationsOf } from "./view.ts"

export type FinalStatus = "completed" | "canceled" | "expired"

export const isFinal = (status: SessionStatus): status is FinalStatus => !isActive(status)

export const iso = (epochMs: number): string => new Date(epochMs).toISOString()

export const NO_RESERVATIONS: Reservations = new Map()

/** The session and the reservations it holds as it is. */
export const transition = (session: Session): Transition => ({ session, reservations: reservationsOf(session) })

/** The session with its details replaced, or without any when there are none. */
export const withDetails = (session: Session, details: SessionDetails | undefined): Session => {
  const { details: _details, ...rest } = session
  return details === undefined ? rest : { ...rest, details }
}

/** The session with `change`'s details merged into its own (a plain buyer drops the stored profile). */
export const withMergedDetails = (
  session: Session,
  change: { readonly buyer?: Buyer | undefined; readonly details?: SessionDetails | undefined }
): Session => withDetails(session, mergeDetails(session.details, change.details, change.buyer !== undefined))

/**
 * The buyer after a change: a buyer profile (a richer format) replaces the buyer even when it has
 * no names to show in the plain form; a plain buyer replaces it; no buyer keeps it.
 */
export const buyerAfter = (
  current: Session,
  change: { readonly buyer?: Buyer | undefined; readonly details?: SessionDetails | undefined }
): Buyer | undefined => change.details?.buyer !== undefined ? change.buyer : change.buyer ?? current.buyer
