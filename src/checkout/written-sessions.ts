/**
 * The sessions this process wrote last; why deciding on them is safe with any number of processes:
 * `docs/concurrency.md`, "Fast paths and the locked path". Entries are taken, not read, so two
 * requests of one session never decide on the same one. Each is kept as JSON text: one string, not
 * an object graph for every young-generation collection it lives through to copy.
 */
import type { SessionForPayment, WrittenSessions } from "./checkout-store.ts"
import { type Session, sessionJson } from "./session/session.ts"

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
