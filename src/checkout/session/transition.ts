/** What the reducer's commands share. */
import { mergeDetails, type SessionDetails } from "./details.ts"
import type { Buyer, SessionStatus } from "./schemas.ts"
import { isActive, type Reservations, type Session, type Transition } from "./session.ts"
import { reservationsOf } from "./view.ts"

export type FinalStatus = "completed" | "canceled" | "expired"

export const isFinal = (status: SessionStatus): status is FinalStatus => !isActive(status)

export const iso = (epochMs: number): string => new Date(epochMs).toISOString()

export const NO_RESERVATIONS: Reservations = new Map()

export const transition = (session: Session): Transition => ({ session, reservations: reservationsOf(session) })

export const withDetails = (session: Session, details: SessionDetails | undefined): Session => {
  const { details: _details, ...rest } = session
  return details === undefined ? rest : { ...rest, details }
}

/** A plain buyer drops the stored profile. */
export const withMergedDetails = (
  session: Session,
  change: { readonly buyer?: Buyer | undefined; readonly details?: SessionDetails | undefined }
): Session => withDetails(session, mergeDetails(session.details, change.details, change.buyer !== undefined))

/** A buyer profile replaces the buyer even without names to show; no buyer keeps it. */
export const buyerAfter = (
  current: Session,
  change: { readonly buyer?: Buyer | undefined; readonly details?: SessionDetails | undefined }
): Buyer | undefined => change.details?.buyer !== undefined ? change.buyer : change.buyer ?? current.buyer
