/**
 * The built-in payment processor: a test processor that decides by card number, for merchants
 * without a payment service yet and for every test and demo (`docs/payments.md`, "Test cards").
 *
 * - `vt_` tokens from this service's vault: the allowance is checked at the Clock's time and the
 *   token is held for the session (marked used by it) before the charge; a decline gives it back.
 *   The card is opened only to pick the outcome: 4000 0000 0000 0002 declines, 4000 0000 0000 9995
 *   is insufficient funds, any other valid card approves.
 * - The well-known test tokens of existing ACP clients (`tok_visa`, `tok_mastercard`, `tok_amex`
 *   approve; `tok_chargeDeclined` and `tok_chargeDeclinedInsufficientFunds` decline), sent in
 *   either payment_data shape.
 * - 3-D Secure: a card its issuer enrolls (the test cards of `docs/three-d-secure.md`) is refused
 *   with `AuthenticationRequired` until the payment presents a result; a presented result is
 *   checked against the authentication provider's record and spent in the payment's transaction
 *   (`issuer-authentication-check.ts`), and the charge records its ECI and transaction id.
 * - Every charge is stored under its idempotency key before it is answered; the same key returns
 *   the stored outcome, so a retried attempt never charges twice.
 * - The charge of a request this processor authorized (the same request value, so the same
 *   payment attempt of the same complete request, in this process) takes the card's outcome
 *   `authorize` read from the vault: the token is read and its card opened once per payment, not
 *   twice. Any other charge (a retry after a crash authorizes again; a payment with an
 *   authentication result opens no card in `authorize`) reads the token itself.
 */
import { Clock, Effect, Either, Layer, Option } from "effect"
import { AuthenticationStore } from "../delegate-authentication/authentication-store.ts"
import { viewAt } from "../delegate-authentication/model/authentication-session.ts"
import { checkAllowance } from "../delegate-payment/model/allowance.ts"
import { detectCardBrand } from "../delegate-payment/model/card-number.ts"
import { VaultStore, type VaultTokenRecord } from "../delegate-payment/vault-store.ts"
import { Vault } from "../delegate-payment/vault.ts"
import { AppConfig } from "../platform/config.ts"
import { Ids } from "../platform/ids.ts"
import { type ChargeOutcome, ChargeStore, type ProcessorCharge } from "./charge-store.ts"
import {
  authenticationRequestFor,
  directoryServerOf,
  needsAuthentication,
  refuseAuthentication
} from "./issuer-authentication-check.ts"
import {
  AuthenticationRequired,
  type Charge,
  type ChargeRequest,
  credentialParam,
  PaymentDeclined,
  PaymentRejected
} from "./model/payment.ts"
import { PaymentProvider } from "./payment-provider.ts"

/**
 * Test tokens of existing ACP clients and what they do. A map, not an object: a token is the
 * client's text, and `constructor` or `__proto__` must be no more known than any other word.
 */
export const TEST_TOKENS: ReadonlyMap<string, ChargeOutcome> = new Map([
  ["tok_visa", "approved"],
  ["tok_mastercard", "approved"],
  ["tok_amex", "approved"],
  ["tok_chargeDeclined", "card_declined"],
  ["tok_chargeDeclinedInsufficientFunds", "insufficient_funds"]
])

/** Card numbers with a fixed outcome; every other valid card approves. */
export const TEST_CARD_OUTCOMES: Readonly<Record<string, ChargeOutcome>> = {
  "4000000000000002": "card_declined",
  "4000000000009995": "insufficient_funds"
}

const declineMessages: Record<Exclude<ChargeOutcome, "approved" | "voided">, string> = {
  card_declined: "The card was declined.",
  insufficient_funds: "The card has insufficient funds."
}

/** What a charge under a key the settlement closed is refused with (see `settleCharge`). */
export const VOIDED_KEY_MESSAGE =
  "This payment attempt was settled without a charge; nothing was charged. Complete the checkout again to pay."

const isVaultToken = (token: string) => token.startsWith("vt_")

/** What a charge records of the authentication it relied on (checked and spent by `authorize`). */
const chargeAuthentication = (request: ChargeRequest) => {
  const details = request.authentication?.outcome_details
  return details === undefined
    ? undefined
    : { eci: details.electronic_commerce_indicator, dsTransId: details.transaction_id }
}

export const BuiltInPaymentProcessor = Layer.effect(
  PaymentProvider,
  Effect.gen(function*() {
    const charges = yield* ChargeStore
    const tokens = yield* VaultStore
    const vault = yield* Vault
    const config = yield* AppConfig
    const ids = yield* Ids
    const authentications = yield* AuthenticationStore
    /** The outcome of the card of each request `authorize` opened it for (see the module comment). */
    const authorizedOutcomes = new WeakMap<ChargeRequest, ChargeOutcome>()

    const rejected = (request: ChargeRequest, message: string) =>
      new PaymentRejected({ message, param: credentialParam(request.credential) })

    const tokenView = (record: VaultTokenRecord) => ({
      id: record.id,
      allowance: record.allowance,
      state: record.state,
      usedBySession: record.usedBySession
    })

    /**
     * Holds the token for this session after checking its allowance, in the caller's transaction.
     * Consuming it first answers the record in the same round trip (the usual case: an active
     * token), and a refusal gives it straight back; a token that is not active is read (locked)
     * and checked as it is — a retry of this session finds it held by itself. Answers the record
     * and whether this call consumed it (then a later refusal gives it back).
     */
    const holdToken = Effect.fnUntraced(function*(request: ChargeRequest, token: string) {
      const now = yield* Clock.currentTimeMillis
      const attempt = {
        merchantId: config.merchantId,
        sessionId: request.sessionId,
        currency: request.currency,
        amount: request.amount,
        now
      }
      const consumed = Option.getOrUndefined(yield* tokens.markTokenUsed(token, request.sessionId, now))
      if (consumed !== undefined) {
        const check = checkAllowance({ ...tokenView(consumed), state: "active", usedBySession: undefined }, attempt)
        if (check._tag === "Left") {
          yield* tokens.releaseToken(token, request.sessionId)
          return yield* rejected(request, check.left.message)
        }
        return { record: consumed, consumedNow: true }
      }
      const record = Option.getOrUndefined(yield* tokens.lockToken(token))
      const check = checkAllowance(record ? tokenView(record) : undefined, attempt)
      if (check._tag === "Left") return yield* rejected(request, check.left.message)
      // Given back by a declined payment since it was consumed above: consume it now. The
      // compare-and-set decides between concurrent sessions even where the read took no lock.
      if (record!.state === "active") {
        if (Option.isNone(yield* tokens.markTokenUsed(token, request.sessionId, now))) {
          return yield* rejected(request, "The payment token has already been used.")
        }
        return { record: record!, consumedNow: true }
      }
      return { record: record!, consumedNow: false }
    })

    const refusedAuthentication = (message: string) =>
      new PaymentRejected({ message, param: "$.authentication_result" })

    /**
     * Checks the presented result with the authentication provider's record of it and spends it
     * for this checkout session (a retry of the same session finds it spent by itself).
     */
    const spendAuthentication = Effect.fnUntraced(
      function*(request: ChargeRequest, cardFingerprint: string | undefined) {
        const presented = request.authentication!
        const transactionId = presented.outcome_details?.transaction_id
        const found = transactionId === undefined
          ? Option.none()
          : yield* authentications.findByDsTransId(transactionId)
        if (Option.isNone(found)) {
          return yield* refusedAuthentication("The authentication provider has no record of this authentication.")
        }
        if (cardFingerprint === undefined) {
          return yield* refusedAuthentication("The authentication was made for another card.")
        }
        const refusal = refuseAuthentication(viewAt(found.value, yield* Clock.currentTimeMillis), presented, {
          checkoutSessionId: request.sessionId,
          amount: request.amount,
          currency: request.currency,
          merchantId: config.merchantId,
          cardFingerprint
        })
        if (Either.isLeft(refusal)) return yield* refusedAuthentication(refusal.left)
        if (!(yield* authentications.markUsed(found.value.id, request.sessionId))) {
          return yield* refusedAuthentication("This authentication has already paid for another checkout session.")
        }
      }
    )

    /** What a held vault token's card needs to be charged: its authentication spent, or its outcome noted. */
    const authorizeCard = Effect.fnUntraced(function*(request: ChargeRequest, record: VaultTokenRecord) {
      if (request.authentication !== undefined) return yield* spendAuthentication(request, record.fingerprint)
      const card = yield* vault.revealCard(record).pipe(
        Effect.tapError((error) => Effect.logError("vault token cannot be opened", error.tokenId, error.reason)),
        Effect.mapError(() => rejected(request, "The payment token cannot be used."))
      )
      if (!needsAuthentication(card.number)) {
        authorizedOutcomes.set(request, TEST_CARD_OUTCOMES[card.number] ?? "approved")
        return
      }
      // The scheme follows from the card number: the brand an agent displays is free text.
      const directoryServer = directoryServerOf(detectCardBrand(card.number))
      if (directoryServer === undefined) {
        return yield* rejected(
          request,
          "This card needs issuer authentication, which its card scheme does not offer."
        )
      }
      return yield* new AuthenticationRequired({
        request: authenticationRequestFor(directoryServer, config.merchantId)
      })
    })

    /**
     * Holds the credential for this session (a `vt_` token after its allowance), then applies
     * 3-D Secure: a presented result must check out and is spent; without one, a card its issuer
     * enrolls is refused with what to authenticate with. Every refusal gives back what this call
     * held.
     */
    const authorize = Effect.fnUntraced(function*(request: ChargeRequest) {
      const token = request.credential.token
      if (!isVaultToken(token)) {
        if (!TEST_TOKENS.has(token)) {
          return yield* rejected(request, "The payment token is not known to the payment processor.")
        }
        // A test token names no card, so no authentication can have been made for it.
        if (request.authentication !== undefined) yield* spendAuthentication(request, undefined)
        return
      }
      const { consumedNow, record } = yield* holdToken(request, token)
      const checks = authorizeCard(request, record)
      yield* consumedNow
        ? Effect.tapError(checks, (refused) =>
          refused._tag === "StorageError"
            ? Effect.void
            : Effect.asVoid(tokens.releaseToken(token, request.sessionId)))
        : checks
    })

    const decide = Effect.fnUntraced(function*(request: ChargeRequest) {
      const authorized = authorizedOutcomes.get(request)
      if (authorized !== undefined) return authorized
      const token = request.credential.token
      if (!isVaultToken(token)) return TEST_TOKENS.get(token) ?? "card_declined"
      const record = yield* tokens.getToken(token)
      if (Option.isNone(record)) return yield* rejected(request, "The payment token does not exist.")
      const card = yield* vault.revealCard(record.value).pipe(
        Effect.tapError((error) => Effect.logError("vault token cannot be opened", error.tokenId, error.reason)),
        Effect.mapError(() => rejected(request, "The payment token cannot be used."))
      )
      return TEST_CARD_OUTCOMES[card.number] ?? "approved"
    })

    /**
     * The charge of the request's idempotency key: the one already made, else a new one. Decided
     * first and then recorded unless a charge exists for the key (`recordCharge` keeps the first):
     * one read fewer than looking the key up first, in the usual case of a first try. When the
     * token can no longer be read (gone, unreadable), an earlier charge still answers a retry.
     */
    const answer = (
      stored: ProcessorCharge,
      outcome: Exclude<ChargeOutcome, "voided">
    ): Effect.Effect<Charge, PaymentDeclined> =>
      outcome === "approved"
        ? Effect.succeed({ id: stored.id, amount: stored.amount, currency: stored.currency })
        : Effect.fail(new PaymentDeclined({ reason: outcome, message: declineMessages[outcome] }))

    /** The stored outcome of the request's key; a key the settlement closed is refused. */
    const answerTo = (request: ChargeRequest) => (stored: ProcessorCharge) => {
      const outcome = stored.outcome
      return outcome === "voided" ? Effect.fail(rejected(request, VOIDED_KEY_MESSAGE)) : answer(stored, outcome)
    }

    const charge = Effect.fnUntraced(function*(request: ChargeRequest) {
      const outcome = yield* Effect.either(decide(request))
      if (Either.isLeft(outcome)) {
        if (outcome.left._tag === "StorageError") return yield* outcome.left
        const earlier = yield* charges.findCharge(request.idempotencyKey)
        return yield* Option.isSome(earlier) ? answerTo(request)(earlier.value) : Effect.fail(outcome.left)
      }
      return yield* answerTo(request)(
        yield* charges.recordCharge({
          idempotencyKey: request.idempotencyKey,
          id: yield* ids.make("ch_"),
          amount: request.amount,
          currency: request.currency,
          outcome: outcome.right,
          createdAt: yield* Clock.currentTimeMillis,
          authentication: chargeAuthentication(request)
        })
      )
    })

    return {
      threeDSecure: true,
      authorize,
      charge,
      release: (request) =>
        isVaultToken(request.credential.token)
          ? tokens.releaseToken(request.credential.token, request.sessionId)
          : Effect.void,
      // The key is closed by recording it voided, unless a charge under it came first: the store
      // keeps the first record of a key, so a charge and the settlement cannot both win.
      settleCharge: Effect.fnUntraced(function*({ amount, currency, idempotencyKey }) {
        const stored = yield* charges.recordCharge({
          idempotencyKey,
          id: yield* ids.make("ch_"),
          amount,
          currency,
          outcome: "voided",
          createdAt: yield* Clock.currentTimeMillis
        })
        const outcome = stored.outcome
        return outcome === "voided" ? Option.none() : Option.some(yield* Effect.either(answer(stored, outcome)))
      })
    }
  })
)
