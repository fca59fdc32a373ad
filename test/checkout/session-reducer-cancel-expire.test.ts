/**
 * The session reducer's Cancel and Expire (expiry exactly at `expires_at`, lazily in the view),
 * and the state table of the interface document: what complete and cancel do on completed and
 * canceled sessions, which hold no reservations and never expire.
 */
import { describe, expect, it } from "@effect/vitest"
import { reduce } from "../../src/checkout/session/reducer.ts"
import { SessionCommand } from "../../src/checkout/session/session.ts"
import { isExpiredAt, reservationsOf, view } from "../../src/checkout/session/view.ts"
import { buyer, context } from "../support/fixtures.ts"
import { at, EXPIRES, fail, iso, LATER, map, ok, order, readySession, withStatus } from "./session-reducer-fixtures.ts"

describe("Cancel", () => {
  it("cancels an active session and releases its reservations", () => {
    const { reservations, session } = ok(reduce(readySession(), SessionCommand.Cancel({}), at(LATER)))
    expect(session.status).toBe("canceled")
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.line_items).toHaveLength(1)
    expect(reservations).toEqual(new Map())
  })

  it("refuses final sessions with their status (405 on cancel)", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(reduce(withStatus(readySession(), status), SessionCommand.Cancel({}), context()))).toMatchObject({
        _tag: "SessionFinal",
        status,
        command: "cancel"
      })
    }
    expect(fail(reduce(readySession(), SessionCommand.Cancel({}), at(EXPIRES)))).toMatchObject({
      _tag: "SessionFinal",
      status: "expired"
    })
    expect(ok(reduce(readySession(), SessionCommand.Cancel({}), at(EXPIRES - 1))).session.status).toBe("canceled")
  })
})

describe("Expire and lazy expiry", () => {
  it("expires exactly at expires_at, not a millisecond before", () => {
    const session = readySession()
    expect(isExpiredAt(session, EXPIRES)).toBe(true)
    expect(isExpiredAt(session, EXPIRES - 1)).toBe(false)
    expect(view(session, EXPIRES).status).toBe("expired")
    expect(view(session, EXPIRES - 1)).toBe(session)

    const expired = ok(reduce(session, SessionCommand.Expire(), at(EXPIRES)))
    expect(expired.session).toEqual({ ...session, status: "expired" })
    expect(expired.reservations).toEqual(new Map())

    const live = ok(reduce(session, SessionCommand.Expire(), at(EXPIRES - 1)))
    expect(live.session).toBe(session)
    expect(live.reservations).toEqual(map({ "tshirt-classic": 2 }))
  })

  it("leaves final sessions alone", () => {
    const canceled = withStatus(readySession(), "canceled")
    const result = ok(reduce(canceled, SessionCommand.Expire(), at(EXPIRES + 1)))
    expect(result.session).toBe(canceled)
    expect(result.reservations).toEqual(new Map())
    expect(view(canceled, EXPIRES + 1).status).toBe("canceled")
  })
})

describe("state table of the interface document", () => {
  const completed = ok(reduce(readySession(), SessionCommand.MarkCompleted({ order }), context())).session
  const canceled = ok(reduce(readySession(), SessionCommand.Cancel({}), context())).session

  it("complete on completed or canceled → SessionFinal(complete), unchanged", () => {
    expect(fail(reduce(completed, SessionCommand.PrepareCompletion({ buyer: undefined }), context()))).toMatchObject({
      _tag: "SessionFinal",
      status: "completed",
      command: "complete"
    })
    expect(fail(reduce(canceled, SessionCommand.PrepareCompletion({ buyer }), context()))).toMatchObject({
      _tag: "SessionFinal",
      status: "canceled",
      command: "complete"
    })
  })

  it("cancel on completed or canceled → SessionFinal(cancel)", () => {
    expect(fail(reduce(completed, SessionCommand.Cancel({}), context()))).toMatchObject({
      status: "completed",
      command: "cancel"
    })
    expect(fail(reduce(canceled, SessionCommand.Cancel({}), context()))).toMatchObject({
      status: "canceled",
      command: "cancel"
    })
  })

  it("completed and canceled sessions hold no reservations and never expire", () => {
    expect(reservationsOf(completed)).toEqual(new Map())
    expect(reservationsOf(canceled)).toEqual(new Map())
    expect(view(completed, EXPIRES * 2).status).toBe("completed")
  })
})
