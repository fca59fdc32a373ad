/**
 * The built-in test processor, deciding by card number or test token (`docs/payments.md`, "Test cards"). A charge
 * takes the card outcome `authorize` read for the same request value; any other charge reads the token itself.
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

/** A map, not an object: a token is the client's text, and `__proto__` must be no more known than any other word. */
export const TEST_TOKENS: ReadonlyMap<string, ChargeOutcome> = new Map([
  ["tok_visa", "approved"],
  ["tok_mastercard", "approved"],
  ["tok_amex", "approved"],
  ["tok_chargeDeclined", "card_declined"],
  ["tok_chargeDeclinedInsufficientFunds", "insufficient_funds"]
])

export const TEST_CARD_OUTCOMES: Readonly<Record<string, ChargeOutcome>> = {
  "4000000000000002": "card_declined",
  "4000000000009995": "insufficient_funds"
}

const declineMessages: Record<Exclude<ChargeOutcome, "approved" | "voided">, string> = {
  card_declined: "The card was declined.",
  insufficient_funds: "The card has insufficient funds."
}

export const VOIDED_KEY_MESSAGE =
  "This payment attempt was settled without a charge; nothing was charged. Complete the checkout again to pay."

const isVaultToken = (token: string) => token.startsWith("vt_")

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
    const authorizedOutcomes = new WeakMap<ChargeRequest, ChargeOutcome>()

    const rejected = (request: ChargeRequest, message: string) =>
      new PaymentRejected({ message, param: credentialParam(request.credential) })

    const tokenView = (record: VaultTokenRecord) => ({
      id: record.id,
      allowance: record.allowance,
      state: record.state,
      usedBySession: record.usedBySession
    })

    /** In the caller's transaction; consumes first (one round trip if active). `consumedNow`: refusals give it back. */
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
      // Given back by a decline since the consume above; the compare-and-set decides even where the read took no lock.
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

    /** Checks the presented result with the provider's record and spends it (a retry finds it spent by its session). */
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

    /** Holds the credential for the session, then applies 3-D Secure; every refusal gives back what this call held. */
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

    const answer = (
      stored: ProcessorCharge,
      outcome: Exclude<ChargeOutcome, "voided">
    ): Effect.Effect<Charge, PaymentDeclined> =>
      outcome === "approved"
        ? Effect.succeed({ id: stored.id, amount: stored.amount, currency: stored.currency })
        : Effect.fail(new PaymentDeclined({ reason: outcome, message: declineMessages[outcome] }))

    const answerTo = (request: ChargeRequest) => (stored: ProcessorCharge) => {
      const outcome = stored.outcome
      return outcome === "voided" ? Effect.fail(rejected(request, VOIDED_KEY_MESSAGE)) : answer(stored, outcome)
    }

    // Decided, then recorded unless the key has a charge (the first is kept): no lookup on a first try, and an
    // earlier charge still answers a retry whose token can no longer be read.
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
      // Records the key voided; the store keeps a key's first record, so a charge and the settlement cannot both win.
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
