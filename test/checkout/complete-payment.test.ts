/**
 * Issue 6: completing a checkout with delegated payment tokens — allowance enforcement, declines,
 * exactly one charge and one order under retries, concurrency and an injected crash. Runs on
 * every store: memory, SQL on embedded PGlite and SQL on PostgreSQL (when TEST_DATABASE_URL is
 * set), with the checkout, vault, charge and order stores sharing one database.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { CheckoutStore, type CheckoutStoreService, type PaidCompletion } from "../../src/checkout/checkout-store.ts"
import type { Session } from "../../src/checkout/session-model.ts"
import { type StorageError } from "../../src/db/storage-error.ts"
import { VaultStore } from "../../src/delegate/vault-store.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import type { MemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { address, buyer, createReadySession, get, post, testApp } from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

const FAR_FUTURE = "2030-01-01T00:00:00Z"

interface TokenOptions {
  readonly number?: string
  readonly maxAmount?: number
  readonly currency?: string
  readonly merchantId?: string
  readonly expiresAt?: string
}

/** Tokenizes a test card for `sessionId` through the delegate payment API. */
const tokenize = (sessionId: string, options: TokenOptions = {}) =>
  Effect.map(
    post("/agentic_commerce/delegate_payment", {
      payment_method: {
        type: "card",
        card_number_type: "fpan",
        number: options.number ?? "4242424242424242",
        exp_month: "12",
        exp_year: "2030",
        cvc: "123",
        display_card_funding_type: "credit",
        metadata: {}
      },
      allowance: {
        reason: "one_time",
        max_amount: options.maxAmount ?? 1_000_000,
        currency: options.currency ?? "usd",
        checkout_session_id: sessionId,
        merchant_id: options.merchantId ?? "merchant_test",
        expires_at: options.expiresAt ?? FAR_FUTURE
      },
      risk_signals: [{ type: "card_testing", score: 1, action: "authorized" }],
      metadata: { source: "test" }
    }),
    (response) => {
      if (response.status !== 201) throw new Error(`tokenize failed: ${response.status} ${response.text}`)
      return response.body.id as string
    }
  )

const handlerPayment = (token: string) => ({
  payment_data: { handler_id: "card_tokenized", instrument: { type: "card", credential: { type: "spt", token } } }
})

const approvedCharges = Effect.flatMap(ChargeStore, (store) => store.listCharges).pipe(
  Effect.map((charges) => charges.filter((charge) => charge.outcome === "approved"))
)

/**
 * The completing step fails once after the charge, before anything of it is stored, as if the
 * process died there.
 */
const crashingOnce = (base: Layer.Layer<CheckoutStore, unknown, MemoryDatabase>, onCrash: () => void) =>
  Layer.effect(
    CheckoutStore,
    Effect.map(CheckoutStore, (store) => {
      let crashes = 1
      const crash = <A, E>(step: Effect.Effect<A, E>) =>
        Effect.suspend(() =>
          crashes-- > 0
            ? Effect.sync(onCrash).pipe(Effect.zipRight(Effect.die(new Error("crash before commit"))))
            : step
        )
      return CheckoutStore.of({
        ...store,
        completePaidCheckout: (completion: PaidCompletion) => crash(store.completePaidCheckout(completion))
      })
    })
  ).pipe(Layer.provide(base))

/** What the first completion step runs instead of `complete` (the store's own), which it may call. */
type AroundCompleting = (
  store: CheckoutStoreService,
  completion: PaidCompletion,
  complete: Effect.Effect<boolean, StorageError>
) => Effect.Effect<boolean, StorageError>

/**
 * The checkout store, except that the first completion step (the optimistic one, after the
 * charge) goes through `around`.
 */
const withAroundCompleting = (base: Layer.Layer<CheckoutStore, unknown, MemoryDatabase>, around: AroundCompleting) =>
  Layer.effect(
    CheckoutStore,
    Effect.map(CheckoutStore, (store) => {
      let first = true
      return CheckoutStore.of({
        ...store,
        completePaidCheckout: (completion: PaidCompletion) =>
          Effect.suspend(() => {
            if (!first) return store.completePaidCheckout(completion)
            first = false
            return around(store, completion, store.completePaidCheckout(completion))
          })
      })
    })
  ).pipe(Layer.provide(base))

/** The session is written again (as it is) first, as a concurrent request would: the completion finds it changed. */
const sessionWrittenFirst = (onWrite: () => void): AroundCompleting => (store, completion, complete) =>
  store.sessions.get(completion.session.id).pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.void, onSome: (session) => Effect.asVoid(store.sessions.update(session)) })
    ),
    Effect.zipRight(Effect.sync(onWrite)),
    Effect.zipRight(complete)
  )

/** What the first unlocked write of a payment attempt runs before it, as a concurrent request would. */
type BeforeStartingAttempt = (store: CheckoutStoreService, session: Session) => Effect.Effect<void, StorageError>

/**
 * The checkout store, except that the first `startPaymentAttemptAt` (step 1 without the lock)
 * runs `before` first, and `written` hears what each one answered.
 */
const withBeforeStartingAttempt = (
  base: Layer.Layer<CheckoutStore, unknown, MemoryDatabase>,
  before: BeforeStartingAttempt,
  written: (version: Option.Option<number>) => void
) =>
  Layer.effect(
    CheckoutStore,
    Effect.map(CheckoutStore, (store) => {
      let first = true
      return CheckoutStore.of({
        ...store,
        startPaymentAttemptAt: (session, attempt, version) =>
          Effect.suspend(() => {
            const step = store.startPaymentAttemptAt(session, attempt, version).pipe(Effect.tap(written))
            if (!first) return step
            first = false
            return Effect.zipRight(before(store, session), step)
          })
      })
    })
  ).pipe(Layer.provide(base))

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

/** The vault store, except that no token can be read any more once `gone()` (purged, or its key retired). */
const forgettingTokens = (base: Layer.Layer<VaultStore, unknown, MemoryDatabase>, gone: () => boolean) =>
  Layer.effect(
    VaultStore,
    Effect.map(VaultStore, (store) => ({
      ...store,
      getToken: (id: string) => (gone() ? Effect.succeed(Option.none()) : store.getToken(id))
    }))
  ).pipe(Layer.provide(base))

const completePaymentSuite = (storeUnderTest: StoreUnderTest) => {
  /**
   * Runs `effect` against a fresh application over fresh stores of this kind; `crash`: the first
   * completing step dies before it stores anything; `tokensGoneAfterCrash`: then `getToken` finds
   * no vault token any more (the charge's own read); `aroundCompleting`: what each one-step completion runs instead.
   */
  const run = <A, E>(
    effect: Effect.Effect<A, E, any>,
    options: {
      crash?: boolean
      tokensGoneAfterCrash?: boolean
      aroundCompleting?: AroundCompleting
      beforeStartingAttempt?: readonly [BeforeStartingAttempt, (version: Option.Option<number>) => void]
    } = {}
  ) =>
    Effect.flatMap(storeUnderTest.freshStores, (stores) => {
      let crashed = false
      const base = stores.store ?? MemoryCheckoutStore
      const around = options.aroundCompleting ? withAroundCompleting(base, options.aroundCompleting) : base
      const store = options.beforeStartingAttempt
        ? withBeforeStartingAttempt(around, ...options.beforeStartingAttempt)
        : around
      const vaultStore = stores.vaultStore ?? MemoryVaultStore
      return Effect.provide(
        effect,
        testApp({
          ...stores,
          store: options.crash ? crashingOnce(store, () => void (crashed = true)) : store,
          ...(options.tokensGoneAfterCrash ? { vaultStore: forgettingTokens(vaultStore, () => crashed) } : {})
        })
      )
    }) as Effect.Effect<A, E, never>

  describe("complete with a vt_ token", () => {
    it.effect("pays with either payment_data shape and consumes the token", () =>
      run(Effect.gen(function*() {
        const first = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(first.id)
        const paid = yield* post(`/checkout_sessions/${first.id}/complete`, handlerPayment(token))
        expect(paid.status).toBe(200)
        expect(paid.body.order.checkout_session_id).toBe(first.id)

        const second = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const legacy = yield* tokenize(second.id)
        const paidLegacy = yield* post(`/checkout_sessions/${second.id}/complete`, {
          payment_data: { token: legacy, provider: "acp_vault" }
        })
        expect(paidLegacy.status).toBe(200)
        const charges = yield* approvedCharges
        expect(charges.map((c) => c.amount)).toEqual([
          first.totals.find((t) => t.type === "total")!.amount,
          second.totals.find((t) => t.type === "total")!.amount
        ])
      })))

    const violations: ReadonlyArray<[string, (sessionId: string) => TokenOptions | "missing", RegExp]> = [
      ["unknown token", () => "missing", /does not exist/],
      ["another merchant", () => ({ merchantId: "merchant_other" }), /merchant/],
      ["another currency", () => ({ currency: "eur" }), /EUR/],
      ["total above max_amount", () => ({ maxAmount: 100 }), /exceeds/]
    ]
    for (const [name, options, message] of violations) {
      it.effect(`422 payment_declined with a message on the session: ${name}`, () =>
        run(Effect.gen(function*() {
          const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
          const opts = options(session.id)
          const token = opts === "missing" ? "vt_doesnotexist" : yield* tokenize(session.id, opts)
          const response = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
          expect(response.status).toBe(422)
          expect(response.body).toMatchObject({
            type: "invalid_request",
            code: "payment_declined",
            param: "$.payment_data.instrument.credential.token"
          })
          expect(response.body.message).toMatch(message)
          const after = (yield* get(`/checkout_sessions/${session.id}`)).body
          expect(after.status).toBe("ready_for_payment")
          expect(after.messages).toContainEqual(expect.objectContaining({ type: "error", code: "payment_declined" }))
          expect(yield* approvedCharges).toEqual([])
          // A refused token is not held: it stays active, unused.
          if (opts !== "missing") {
            const stored = Option.getOrThrow(yield* Effect.flatMap(VaultStore, (vault) => vault.getToken(token)))
            expect([stored.state, stored.usedBySession]).toEqual(["active", undefined])
          }
        })))
    }

    it.effect("a token issued for another session, or already used, cannot pay", () =>
      run(Effect.gen(function*() {
        const a = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const b = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const token = yield* tokenize(a.id)
        const wrongSession = yield* post(`/checkout_sessions/${b.id}/complete`, handlerPayment(token))
        expect(wrongSession.status).toBe(422)
        expect(wrongSession.body.message).toMatch(/another checkout session/)
        const refused = Option.getOrThrow(yield* Effect.flatMap(VaultStore, (vault) => vault.getToken(token)))
        expect([refused.state, refused.usedBySession]).toEqual(["active", undefined])
        expect((yield* post(`/checkout_sessions/${a.id}/complete`, handlerPayment(token))).status).toBe(200)
        const reused = yield* post(`/checkout_sessions/${b.id}/complete`, handlerPayment(token))
        expect(reused.status).toBe(422)
        expect(reused.body.message).toMatch(/already been used|another checkout session/)
        expect(yield* approvedCharges).toHaveLength(1)
      })))

    it.effect("the allowance expires at expires_at by the Clock", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const expiresAt = new Date(60_000).toISOString()
        const token = yield* tokenize(session.id, { expiresAt })
        yield* TestClock.adjust(60_000)
        const late = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(token))
        expect(late.status).toBe(422)
        expect(late.body.message).toMatch(/expired/)

        const other = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const fresh = yield* tokenize(other.id, { expiresAt: new Date(120_000).toISOString() })
        yield* TestClock.adjust(59_999)
        expect((yield* post(`/checkout_sessions/${other.id}/complete`, handlerPayment(fresh))).status).toBe(200)
      })))
  })

  describe("declines", () => {
    it.effect("a declined card is 402; the token is given back and another card then pays", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const declined = yield* tokenize(session.id, { number: "4000000000000002" })
        const first = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(declined))
        expect(first.status).toBe(402)
        expect(first.body).toMatchObject({
          type: "processing_error",
          code: "payment_declined",
          message: "The card was declined."
        })
        const after = (yield* get(`/checkout_sessions/${session.id}`)).body
        expect(after.status).toBe("ready_for_payment")
        expect(after.messages).toContainEqual(
          expect.objectContaining({ code: "payment_declined", content: "The card was declined." })
        )
        const poor = yield* tokenize(session.id, { number: "4000000000009995" })
        const second = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(poor))
        expect(second.status).toBe(402)
        expect(second.body.message).toMatch(/insufficient funds/)
        const good = yield* tokenize(session.id)
        const third = yield* post(`/checkout_sessions/${session.id}/complete`, handlerPayment(good))
        expect(third.status).toBe(200)
        expect(third.body.messages).toEqual([])
        expect(yield* approvedCharges).toHaveLength(1)
      })))

    it.effect("well-known test tokens in the legacy shape (provider stripe)", () =>
      run(Effect.gen(function*() {
        const session = yield* createReadySession([{ id: "mug-ceramic", quantity: 1 }])
        const declined = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_chargeDeclined", provider: "stripe" }
        })
        expect(declined.status).toBe(402)
        const unknown = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_unknown", provider: "stripe" }
        })
        expect(unknown.status).toBe(422)
        const paid = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: { token: "tok_visa", provider: "stripe" }
        })
        expect(paid.status).toBe(200)
      })))
  })

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
}

for (const storeUnderTest of storesUnderTest) {
  describe.skipIf(!storeUnderTest.available)(`complete and pay on ${storeUnderTest.name}`, () => {
    storeUnderTest.register()
    completePaymentSuite(storeUnderTest)
  })
}
