/**
 * The session reducer's payment steps: PrepareCompletion (the buyer applied first, the gaps of a
 * session not ready, final sessions refused), MarkCompleted (the order recorded, reservations
 * released) and RecordPaymentFailure (the decline message kept after the readiness messages).
 */
import { describe, expect, it } from "@effect/vitest"
import { reduce } from "../../src/checkout/session/reducer.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { SessionCommand } from "../../src/checkout/session/session.ts"
import { reservationsOf } from "../../src/checkout/session/view.ts"
import { buyer, context, NY } from "../support/fixtures.ts"
import {
  at,
  create,
  declined,
  EXPIRES,
  fail,
  iso,
  LATER,
  map,
  ok,
  order,
  readySession,
  withStatus
} from "./session-reducer-fixtures.ts"

describe("PrepareCompletion", () => {
  const prepare = (session: Session, b: typeof buyer | undefined, ctx = at(LATER)) =>
    reduce(session, SessionCommand.PrepareCompletion({ buyer: b }), ctx)

  it("returns the ready session, keeping the deadline and the reservations", () => {
    const { reservations, session } = ok(prepare(readySession(), undefined))
    expect(session.status).toBe("ready_for_payment")
    expect(session.expires_at).toBe(iso(EXPIRES))
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.totals.find((t) => t.type === "total")?.amount).toBe(5988)
    expect(reservations).toEqual(map({ "tshirt-classic": 2 }))
  })

  it("applies the buyer first", () => {
    const noBuyer = create({ items: [{ id: "tshirt-classic", quantity: 1 }], fulfillment_address: NY })
    expect(noBuyer.status).toBe("not_ready_for_payment")
    const { session } = ok(prepare(noBuyer, buyer))
    expect(session.status).toBe("ready_for_payment")
    expect(session.buyer).toEqual(buyer)
    expect(session.messages).toEqual([])
  })

  it("fails with the gaps when not ready", () => {
    const bare = create({ items: [{ id: "tshirt-classic", quantity: 1 }] })
    const error = fail(prepare(bare, undefined))
    expect(error._tag).toBe("SessionNotReady")
    if (error._tag === "SessionNotReady") {
      expect(error.messages.map((m) => [m.code, m.param])).toEqual([
        ["missing", "$.fulfillment_address"],
        ["missing", "$.buyer"]
      ])
    }
    const empty = ok(reduce(readySession(), SessionCommand.Update({ request: { items: [] } }), context())).session
    expect(fail(prepare(empty, buyer))).toMatchObject({
      _tag: "SessionNotReady",
      messages: [{ code: "missing", param: "$.items" }]
    })
  })

  it("refuses final sessions with their status (409 on complete)", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(prepare(withStatus(readySession(), status), buyer))).toMatchObject({
        _tag: "SessionFinal",
        status,
        command: "complete"
      })
    }
    expect(fail(prepare(readySession(), buyer, at(EXPIRES)))).toMatchObject({
      _tag: "SessionFinal",
      status: "expired",
      command: "complete"
    })
    expect(ok(prepare(readySession(), buyer, at(EXPIRES - 1))).session.status).toBe("ready_for_payment")
  })
})

describe("MarkCompleted", () => {
  it("completes with the order, drops the decline message and releases reservations", () => {
    const failed =
      ok(reduce(readySession(), SessionCommand.RecordPaymentFailure({ message: declined }), context())).session
    const { reservations, session } = ok(reduce(failed, SessionCommand.MarkCompleted({ order }), at(LATER)))
    expect(session.status).toBe("completed")
    expect(session.order).toEqual(order)
    expect(session.messages).toEqual([])
    expect(session.updated_at).toBe(iso(LATER))
    expect(session.line_items).toEqual(failed.line_items)
    expect(reservations).toEqual(new Map())
    expect(reservationsOf(session)).toEqual(new Map())
  })

  it("records the order even if the deadline passed since the payment was prepared", () => {
    expect(ok(reduce(readySession(), SessionCommand.MarkCompleted({ order }), at(EXPIRES + 5))).session.status).toBe(
      "completed"
    )
  })

  it("refuses sessions already final", () => {
    for (const status of ["completed", "canceled", "expired"] as const) {
      expect(fail(reduce(withStatus(readySession(), status), SessionCommand.MarkCompleted({ order }), context())))
        .toMatchObject({
          _tag: "SessionFinal",
          status,
          command: "complete"
        })
    }
  })
})

describe("RecordPaymentFailure", () => {
  it("adds the decline after the readiness messages, replacing an earlier decline", () => {
    const first = ok(reduce(readySession(), SessionCommand.RecordPaymentFailure({ message: declined }), at(LATER)))
    expect(first.session.status).toBe("ready_for_payment")
    expect(first.session.messages).toEqual([declined])
    expect(first.session.updated_at).toBe(iso(LATER))
    expect(first.session.expires_at).toBe(iso(EXPIRES))
    expect(first.reservations).toEqual(map({ "tshirt-classic": 2 }))
    const again = { ...declined, content: "Insufficient funds." }
    const second = ok(reduce(first.session, SessionCommand.RecordPaymentFailure({ message: again }), at(LATER)))
    expect(second.session.messages).toEqual([again])
  })

  it("keeps the status and the readiness gaps of a session that is not ready", () => {
    const bare = create({ items: [{ id: "tshirt-classic", quantity: 1 }] })
    const { session } = ok(reduce(bare, SessionCommand.RecordPaymentFailure({ message: declined }), context()))
    expect(session.status).toBe("not_ready_for_payment")
    expect(session.messages.map((m) => m.param)).toEqual(["$.fulfillment_address", "$.buyer", "$.payment_data"])
  })

  it("refuses final sessions", () => {
    expect(
      fail(
        reduce(
          withStatus(readySession(), "canceled"),
          SessionCommand.RecordPaymentFailure({ message: declined }),
          context()
        )
      )
    ).toMatchObject({
      _tag: "SessionFinal",
      status: "canceled"
    })
    expect(fail(reduce(readySession(), SessionCommand.RecordPaymentFailure({ message: declined }), at(EXPIRES))))
      .toMatchObject({
        _tag: "SessionFinal",
        status: "expired"
      })
  })
})
