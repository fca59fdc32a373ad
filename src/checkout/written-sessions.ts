/**
 * The sessions this process wrote last (`WrittenSessions`, kept by each checkout store), each as it
 * was written and at the version the write gave it: what the next step of a checkout served by the same process decides on instead of reading
 * the session again (create → update → complete is three steps on one session).
 *
 * Why that is safe with any number of processes: an entry is put only once its write committed,
 * so it is the stored session at that version (a version is never given twice to a session), and
 * a decision made on it is only ever written by a conditional step that holds only if the session
 * is still at that version. When another process (or the expiry sweep) wrote the session since,
 * that step writes nothing, and so does a refusal decided on an entry: the use case then goes on
 * from a read, as without the entry (`known` in `write-optimistically.ts`). Entries are taken, not
 * read: two requests of one session in this process never decide on the same one.
 *
 * Bounded: past `WRITTEN_SESSIONS_KEPT` entries the oldest goes. A session is kept from its
 * create or optimistic update until the next step of it in this process takes it, as the JSON
 * text stores keep (`sessionJson`), given back by `JSON.parse` as a read would: one string per
 * session instead of its object graph, which every young-generation collection it lives through
 * would copy.
 */
import type { SessionForPayment, WrittenSessions } from "./checkout-store.ts"
import { type Session, sessionJson } from "./session/session.ts"

/** How many sessions a process keeps. */
export const WRITTEN_SESSIONS_KEPT = 512

interface Entry extends Omit<SessionForPayment, "session"> {
  readonly json: string
}

export const makeWrittenSessions = (kept = WRITTEN_SESSIONS_KEPT): WrittenSessions => {
  // A Map iterates in insertion order: its first key is the oldest entry.
  const entries = new Map<string, Entry>()
  return {
    take: (id) => {
      const entry = entries.get(id)
      if (entry === undefined) return undefined
      entries.delete(id)
      const session: Session = JSON.parse(entry.json)
      return { session, version: entry.version, latestAttempt: entry.latestAttempt, couponHolds: entry.couponHolds }
    },
    put: ({ couponHolds, latestAttempt, session, version }) => {
      entries.delete(session.id)
      entries.set(session.id, { json: sessionJson(session), version, latestAttempt, couponHolds })
      if (entries.size > kept) entries.delete(entries.keys().next().value!)
    }
  }
}
