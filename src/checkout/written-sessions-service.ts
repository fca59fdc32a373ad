/**
 * The sessions this process wrote last, each as it was written and at the version the write gave
 * it: what the next step of a checkout served by the same process decides on instead of reading
 * the session again (create → update → complete is three steps on one session).
 *
 * Why that is safe with any number of processes: an entry is put only once its write committed,
 * so it is the stored session at that version (a version is never given twice to a session), and
 * a decision made on it is only ever written by a conditional step that holds only if the session
 * is still at that version. When another process (or the expiry sweep) wrote the session since,
 * that step writes nothing, and so does a refusal decided on an entry: the use case then goes on
 * from a read, as without the entry (`writeOptimistically`'s `known`). Entries are taken, not
 * read: two requests of one session in this process never decide on the same one.
 *
 * Bounded: past `WRITTEN_SESSIONS_KEPT` entries the oldest goes. A session is kept from its
 * create or optimistic update until the next step of it in this process takes it.
 */
import type { Option } from "effect"
import type { PaymentAttempt, VersionedSession } from "./checkout-store.ts"

/** How many sessions a process keeps. */
export const WRITTEN_SESSIONS_KEPT = 512

/** A session as this process wrote it, with its version. */
export interface WrittenSession extends VersionedSession {
  /**
   * What completing reads with the session, when the write knew it: its latest payment attempt
   * and its coupon holds at this version (both change only with a write of the session).
   */
  readonly payment:
    | { readonly latestAttempt: Option.Option<PaymentAttempt>; readonly couponHolds: ReadonlyArray<string> }
    | undefined
}

export interface WrittenSessions {
  /** The entry of `id`, removed: undefined when this process has none. */
  readonly take: (id: string) => WrittenSession | undefined
  /** Keeps `written` as the latest entry of its session. Call only once its write committed. */
  readonly put: (written: WrittenSession) => void
}

export const makeWrittenSessions = (kept = WRITTEN_SESSIONS_KEPT): WrittenSessions => {
  // A Map iterates in insertion order: its first key is the oldest entry.
  const entries = new Map<string, WrittenSession>()
  return {
    take: (id) => {
      const entry = entries.get(id)
      if (entry !== undefined) entries.delete(id)
      return entry
    },
    put: (written) => {
      entries.delete(written.session.id)
      entries.set(written.session.id, written)
      if (entries.size > kept) entries.delete(entries.keys().next().value!)
    }
  }
}
