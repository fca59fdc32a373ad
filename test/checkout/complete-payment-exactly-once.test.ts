/**
 * Completing a checkout charges once and writes one order, on every store: under 20 concurrent
 * completes, a crash between the charge and the commit (and a retry after it, the token then
 * unreadable), a session written or canceled by a concurrent request between the steps of the
 * completion, a client that goes away once charged; the buyer of a declined complete is kept.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { VaultStore } from "../../src/delegate-payment/vault-store.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { address, buyer, createReadySession, get, post } from "../support/http.ts"
import {
  approvedCharges,
  type AroundCompleting,
  type BeforeStartingAttempt,
  completeAndPayOnEveryStore,
  handlerPayment,
  tokenize
} from "./complete-payment-fixtures.ts"

/** The session is written again (as it is) first, as a concurrent request would: the completion finds it changed. */
const sessionWrittenFirst = (onWrite: () => void): AroundCompleting => (store, completion, complete) =>
  store.sessions.get(completion.session.id).pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.void, onSome: (session) => Effect.asVoid(store.sessions.update(session)) })
    ),
    Effect.zipRight(Effect.sync(onWrite)),
    Effect.zipRight(complete)
  )

/**
 * The session written in `status` (by a concurrent request) between step 1's unlocked read and its
 * write; `answers` collects what the unlocked writes answered.
 */
const writtenBeforeTheAttempt = (
  status: Session["status"],
  answers: Array<Option.Option<number>>
): readonly [BeforeStartingAttempt, (version: Option.Option<number>) => void] => [
  (store, session) => Effect.asVoid(store.sessions.update({ ...session, status })),
  (answer) => void answers.push(answer)
]

completeAndPayOnEveryStore((run) => {
  describe("exactly once", () => {
    it.effect("20 concurrent completes of one session: one order, one charge", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(session.id)
        const responses = yield* Effect.all(
          Array.from({ length: 20 }, () => post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))),
          { concurrency: "unbounded" }
        )
        const ok = responses.filter((r) => r.status === 200)
        expect(ok).toHaveLength(1)
        expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true)
        expect(yield* approvedCharges).toHaveLength(1)
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.order ?? ok[0]!.body.order).toBeDefined()
      })))

    it.effect("a crash between the charge and the commit is recovered by a retry without a second charge", () =>
      run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const crashed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(crashed.status).toBe(500)
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
          expect(yield* approvedCharges).toHaveLength(1) // charged, not committed
          // Another credential while that payment is still pending: in flight, retry shortly.
          const other = yield* post(`/checkout_sessions/${session.id}/complete`, {
            payment_data: { token: "tok_mastercard", provider: "stripe" }
          })
          expect(other.status).toBe(409)
          expect(other.body.code).toBe("idempotency_in_flight")
          expect(other.headers.get("retry-after")).toBe("1")
          const retried = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(retried.status).toBe(200)
          expect(yield* approvedCharges).toHaveLength(1) // the same charge
          const stock = yield* Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(0))
          expect(stock.find((level) => level.productId === "print-limited")?.onHand).toBe(2)
        }),
        { crash: true }
      ))

    it.effect("a session written between step 1's read and its write: decided again under the lock, paid once", () => {
      const answers: Array<Option.Option<number>> = []
      return run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          // A change of the items runs under the lock: this process keeps nothing of the session,
          // so step 1 reads it.
          const relisted = yield* post(`/checkout_sessions/${session.id}`, {
            items: [{ id: "print-limited", quantity: 1 }]
          })
          expect(relisted.status).toBe(200)
          const token = yield* tokenize(session.id)
          const completed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(answers).toEqual([Option.none()]) // the unlocked write found the session moved
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          expect(yield* approvedCharges).toHaveLength(1)
          const store = yield* CheckoutStore
          const attempt = Option.getOrThrow(yield* store.readSessionForPayment(session.id)).latestAttempt
          expect(Option.map(attempt, (a) => [a.sequence, a.state])).toEqual(Option.some([1, "succeeded"]))
          const vault = yield* VaultStore
          expect(Option.map(yield* vault.getToken(token), (t) => [t.state, t.usedBySession])).toEqual(
            Option.some(["used", session.id])
          )
        }),
        { beforeStartingAttempt: writtenBeforeTheAttempt("ready_for_payment", answers) }
      )
    })

    it.effect("a session written since this process wrote it: step 1 goes on from a read, paid once", () => {
      const answers: Array<Option.Option<number>> = []
      return run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const completed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          // Decided on the session as created, whose write no longer held; then on a read.
          expect(answers).toEqual([Option.none(), Option.some(3)])
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          expect(yield* approvedCharges).toHaveLength(1)
          const vault = yield* VaultStore
          expect(Option.map(yield* vault.getToken(token), (t) => [t.state, t.usedBySession])).toEqual(
            Option.some(["used", session.id])
          )
        }),
        { beforeStartingAttempt: writtenBeforeTheAttempt("ready_for_payment", answers) }
      )
    })

    it.effect("a session canceled between step 1's read and its write is not charged", () => {
      const answers: Array<Option.Option<number>> = []
      return run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const refused = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(answers).toEqual([Option.none()])
          expect(refused.status).toBe(409)
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("canceled")
          expect(yield* approvedCharges).toHaveLength(0)
          const store = yield* CheckoutStore
          expect(Option.getOrThrow(yield* store.readSessionForPayment(session.id)).latestAttempt).toEqual(Option.none())
          // The same answer as a complete of the canceled session.
          const again = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect([again.status, again.body.code]).toEqual([refused.status, refused.body.code])
        }),
        { beforeStartingAttempt: writtenBeforeTheAttempt("canceled", answers) }
      )
    })

    it.effect("a session written between the charge and the completion is completed under its lock, once", () => {
      let writes = 0
      return run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const completed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(writes).toBe(1)
          expect(completed.status).toBe(200)
          expect(completed.body.status).toBe("completed")
          const order = completed.body.order
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          expect(yield* approvedCharges).toHaveLength(1)
          const stock = yield* Effect.flatMap(CheckoutStore, (store) => store.inventory.stockLevels(0))
          expect(stock.find((level) => level.productId === "print-limited")).toMatchObject({ onHand: 2, reserved: 0 })
          const orders = yield* OrderStore
          expect(Option.getOrThrow(yield* orders.getOrder(order.id)).sessionId).toBe(session.id)
          expect((yield* orders.listEvents({ limit: 10 })).map((event) => event.type)).toEqual(["order_create"])
        }),
        { aroundCompleting: sessionWrittenFirst(() => void writes++) }
      )
    })

    it.effect("a complete whose client goes away once charged still completes the session", () => {
      const entered = Effect.runSync(Effect.makeLatch(false))
      const proceed = Effect.runSync(Effect.makeLatch(false))
      const finished = Effect.runSync(Effect.makeLatch(false))
      return run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const request = yield* Effect.fork(post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token)))
          yield* entered.await
          // The client goes away while the completion is being written.
          const interrupting = yield* Effect.fork(Fiber.interrupt(request))
          yield* proceed.open
          yield* Fiber.join(interrupting)
          // The server's side of the request goes on by itself: wait until its completion returned.
          yield* finished.await
          expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("completed")
          expect(yield* approvedCharges).toHaveLength(1)
          const orders = yield* OrderStore
          expect((yield* orders.listEvents({ limit: 10 })).map((event) => event.type)).toEqual(["order_create"])
        }),
        {
          aroundCompleting: (_store, _completion, complete) =>
            entered.open.pipe(Effect.zipRight(proceed.await), Effect.zipRight(complete), Effect.ensuring(finished.open))
        }
      )
    })

    it.effect("a retry after the crash is answered by the first charge; a charge never reads its token again", () =>
      run(
        Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "print-limited", quantity: 1 }])
          const token = yield* tokenize(session.id)
          const crashed = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(crashed.status).toBe(500)
          expect(yield* approvedCharges).toHaveLength(1) // charged, not committed; now the token is unreadable
          const retried = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(retried.status).toBe(200)
          expect(retried.body.status).toBe("completed")
          expect(yield* approvedCharges).toHaveLength(1) // the same charge, not a decline of a paid session

          // The charge decides by the card its authorization opened, in the same request: it does
          // not read the token a second time.
          const other = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const otherToken = yield* tokenize(other.id)
          const paid = yield* post(`/checkout_sessions/${other.id}/complete`, handlerPayment(otherToken))
          expect(paid.status).toBe(200)
          expect(yield* approvedCharges).toHaveLength(2)
        }),
        { crash: true, tokensGoneAfterCrash: true }
      ))

    it.effect("the buyer of the complete request is kept even when the payment is declined", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/checkout_sessions", {
          items: [{ id: "mug-ceramic", quantity: 1 }],
          fulfillment_address: address,
          buyer
        })
        const token = yield* tokenize(created.body.id, { number: "4000000000000002" })
        const newBuyer = { ...buyer, first_name: "Grace" }
        const declined = yield* post(`/checkout_sessions/${created.body.id}/complete`, {
          ...handlerPayment(token),
          buyer: newBuyer
        })
        expect(declined.status).toBe(402)
        expect((yield* get(`/checkout_sessions/${created.body.id}`)).body.buyer.first_name).toBe("Grace")
      })))
  })
})
