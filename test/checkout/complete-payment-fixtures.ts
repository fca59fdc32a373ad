/**
 * What the tests of completing a checkout with delegated payment tokens share: tokenizing a test
 * card, the `payment_data` that pays with a token, the approved charges, the faults a run can
 * inject into its stores (a crash after the charge, a concurrent write, tokens gone), and
 * `completeAndPayOnEveryStore`, which registers cases on every store: memory, SQL on embedded
 * PGlite and SQL on PostgreSQL (when TEST_DATABASE_URL is set), with the checkout, vault, charge
 * and order stores sharing one database.
 */
import { describe } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { CheckoutStore, type CheckoutStoreService, type PaidCompletion } from "../../src/checkout/checkout-store.ts"
import type { Session } from "../../src/checkout/session/session.ts"
import { type StorageError } from "../../src/db/storage-error.ts"
import { VaultStore, type VaultTokenRecord } from "../../src/delegate-payment/vault-store.ts"
import { ChargeStore } from "../../src/payments/charge-store.ts"
import { MemoryChargeStore } from "../doubles/memory-charge-store.ts"
import { MemoryCheckoutStore } from "../doubles/memory-checkout-store.ts"
import type { MemoryDatabase } from "../doubles/memory-database.ts"
import { MemoryVaultStore } from "../doubles/memory-vault-store.ts"
import { post, testApp } from "../support/http.ts"
import { storesUnderTest, type StoreUnderTest } from "../support/store-under-test.ts"

const FAR_FUTURE = "2030-01-01T00:00:00Z"

export interface TokenOptions {
  readonly number?: string
  readonly maxAmount?: number
  readonly currency?: string
  readonly merchantId?: string
  readonly expiresAt?: string
}

/** Tokenizes a test card for `sessionId` through the delegate payment API. */
export const tokenize = (sessionId: string, options: TokenOptions = {}) =>
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

export const handlerPayment = (token: string) => ({
  payment_data: { handler_id: "card_tokenized", instrument: { type: "card", credential: { type: "spt", token } } }
})

export const approvedCharges = Effect.flatMap(ChargeStore, (store) => store.listCharges).pipe(
  Effect.map((charges) => charges.filter((charge) => charge.outcome === "approved"))
)

/**
 * The completing step fails once after the charge, before anything of it is stored, as if the
 * process died there.
 */
export const crashingOnce = (base: Layer.Layer<CheckoutStore, unknown, MemoryDatabase>, onCrash: () => void) =>
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
export type AroundCompleting = (
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

/** What the first unlocked write of a payment attempt runs before it, as a concurrent request would. */
export type BeforeStartingAttempt = (store: CheckoutStoreService, session: Session) => Effect.Effect<void, StorageError>

/** Runs a step as it is, except that the first time one `counts`, `before` runs ahead of it. */
const beforeFirstStep = () => {
  let first = true
  return <A, E, E2>(step: Effect.Effect<A, E>, before: () => Effect.Effect<void, E2>, counts = true) =>
    Effect.suspend(() => {
      if (!first || !counts) return step
      first = false
      return Effect.zipRight(before(), step)
    })
}

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
      const withBefore = beforeFirstStep()
      return CheckoutStore.of({
        ...store,
        startPaymentAttemptAt: (session, attempt, version) =>
          withBefore(
            store.startPaymentAttemptAt(session, attempt, version).pipe(Effect.tap(written)),
            () => before(store, session)
          )
      })
    })
  ).pipe(Layer.provide(base))

/**
 * The charge store, except that `before()` runs first when the processor records its first charge
 * (a request stalled between its step 1 and its charge, while `before` happens).
 */
const stallingFirstCharge = (
  base: Layer.Layer<ChargeStore, unknown, MemoryDatabase>,
  before: () => Effect.Effect<void>
) =>
  Layer.effect(
    ChargeStore,
    Effect.map(ChargeStore, (store) => {
      const withBefore = beforeFirstStep()
      return ChargeStore.of({
        ...store,
        recordCharge: (charge) => withBefore(store.recordCharge(charge), before, charge.outcome !== "voided")
      })
    })
  ).pipe(Layer.provide(base))

/** The vault store, except that no token can be read any more once `gone()` (purged, or its key retired). */
const forgettingTokens = (base: Layer.Layer<VaultStore, unknown, MemoryDatabase>, gone: () => boolean) =>
  Layer.effect(
    VaultStore,
    Effect.map(VaultStore, (store) => ({
      ...store,
      getToken: (id: string) => (gone() ? Effect.succeed(Option.none()) : store.getToken(id))
    }))
  ).pipe(Layer.provide(base))

/**
 * The vault store, except that every token it reads or consumes comes back with a card envelope
 * that does not open (as under a retired vault key): its id, the envelope's authenticated data,
 * altered.
 */
const unreadableCards = (base: Layer.Layer<VaultStore, unknown, MemoryDatabase>) =>
  Layer.effect(
    VaultStore,
    Effect.map(VaultStore, (store) => {
      const unreadable = Option.map((record: VaultTokenRecord) => ({ ...record, id: `${record.id}_other` }))
      return VaultStore.of({
        ...store,
        getToken: (id) => Effect.map(store.getToken(id), unreadable),
        lockToken: (id) => Effect.map(store.lockToken(id), unreadable),
        markTokenUsed: (id, sessionId, now) => Effect.map(store.markTokenUsed(id, sessionId, now), unreadable)
      })
    })
  ).pipe(Layer.provide(base))

/**
 * Runs `effect` against a fresh application over fresh stores of `storeUnderTest`'s kind; `crash`:
 * the first completing step dies before it stores anything; `tokensGoneAfterCrash`: then
 * `getToken` finds no vault token any more (the charge's own read); `aroundCompleting`: what each
 * one-step completion runs instead; `beforeStartingAttempt`: what runs before the first unlocked
 * write of a payment attempt, and who hears what each one answered; `unreadableCards`: no token
 * read has a card the vault can open; `beforeFirstCharge`: what runs before the processor records
 * its first charge.
 */
const runOn = (storeUnderTest: StoreUnderTest) =>
<A, E>(
  effect: Effect.Effect<A, E, any>,
  options: {
    crash?: boolean
    tokensGoneAfterCrash?: boolean
    aroundCompleting?: AroundCompleting
    beforeStartingAttempt?: readonly [BeforeStartingAttempt, (version: Option.Option<number>) => void]
    unreadableCards?: boolean
    beforeFirstCharge?: () => Effect.Effect<void>
  } = {}
) =>
  Effect.flatMap(storeUnderTest.freshStores, (stores) => {
    let crashed = false
    const base = stores.store ?? MemoryCheckoutStore
    const around = options.aroundCompleting ? withAroundCompleting(base, options.aroundCompleting) : base
    const store = options.beforeStartingAttempt
      ? withBeforeStartingAttempt(around, ...options.beforeStartingAttempt)
      : around
    const baseVault = stores.vaultStore ?? MemoryVaultStore
    const forgetting = options.tokensGoneAfterCrash ? forgettingTokens(baseVault, () => crashed) : baseVault
    const vaultStore = options.unreadableCards ? unreadableCards(forgetting) : forgetting
    const charges = stores.chargeStore ?? MemoryChargeStore
    return Effect.provide(
      effect,
      testApp({
        ...stores,
        store: options.crash ? crashingOnce(store, () => void (crashed = true)) : store,
        vaultStore,
        chargeStore: options.beforeFirstCharge ? stallingFirstCharge(charges, options.beforeFirstCharge) : charges
      })
    )
  }) as Effect.Effect<A, E, never>

/** How the cases registered by `completeAndPayOnEveryStore` run their effects (see `runOn`). */
export type Run = ReturnType<typeof runOn>

/**
 * Registers `cases` once for every store available to this run, each time under
 * "complete and pay on <store>", with the `run` of that store.
 */
export const completeAndPayOnEveryStore = (cases: (run: Run) => void) => {
  for (const storeUnderTest of storesUnderTest) {
    describe.skipIf(!storeUnderTest.available)(`complete and pay on ${storeUnderTest.name}`, () => {
      storeUnderTest.register()
      cases(runOn(storeUnderTest))
    })
  }
}
