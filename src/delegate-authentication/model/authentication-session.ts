/**
 * An issuer authentication (3-D Secure 2) session as the built-in provider keeps it, and the pure steps that move it.
 * Times are epoch ms of the caller's Clock; past `expiresAt` a session shows `expired` and can neither move on nor pay.
 * The card is kept as the vault's keyed fingerprint (to match a payment's token), brand and last 4, never the number.
 */
import { Data, Either, Schema } from "effect"

export const AuthenticationStatus = Schema.Literal(
  "action_required",
  "pending",
  "not_supported",
  "authenticated",
  "attempted",
  "not_authenticated",
  "rejected",
  "unavailable",
  "expired",
  "challenge_abandoned"
)
export type AuthenticationStatus = typeof AuthenticationStatus.Type

/** What the simulated access control server does with a card. */
export type CardScenario = "frictionless" | "attempted" | "challenge" | "fails" | "not_enrolled"

/** The 3-D Secure test cards developers know, plus this simulator's own for `A` (attempted); others aren't enrolled. */
export const THREE_DS_TEST_CARDS: Readonly<Record<string, CardScenario>> = {
  "4000002760003184": "challenge",
  "4000000000003220": "frictionless",
  "4000000000003097": "attempted",
  "4000000000003063": "fails"
}

export const scenarioOf = (cardNumber: string): CardScenario => THREE_DS_TEST_CARDS[cardNumber] ?? "not_enrolled"

/** The one-time code the simulated challenge accepts; any other code fails it (`docs/three-d-secure.md`). */
export const TEST_CHALLENGE_CODE = "123456"

export const THREE_DS_VERSION = "2.2.0"

export type DirectoryServer = "visa" | "mastercard" | "american_express"

export interface AcquirerDetails {
  readonly acquirer_bin: string
  readonly acquirer_country: string
  readonly acquirer_merchant_id: string
  readonly merchant_name: string
  readonly requestor_id?: string
}

export interface ProviderResult {
  readonly transStatus: "Y" | "A" | "N" | "R" | "U"
  readonly eci?: string
  readonly cryptogram?: string
  readonly transStatusReason?: string
  readonly cardholderInfo?: string
}

export interface AuthenticationSession {
  readonly id: string
  /** The API key the session was created with: only it can move or read the session. */
  readonly clientKeyId: string
  readonly merchantId: string
  readonly checkoutSessionId: string | undefined
  /** Minor units. */
  readonly amount: number
  /** ISO 4217, upper case as the API takes it. */
  readonly currency: string
  readonly card: { readonly fingerprint: string; readonly brand: string; readonly last4: string }
  readonly scenario: CardScenario
  readonly acquirerDetails: AcquirerDetails | undefined
  /** Whether browser channel data was given (at create or authenticate): the challenge needs it. */
  readonly channelGiven: boolean
  readonly challengeNotificationUrl: string | undefined
  readonly status: AuthenticationStatus
  readonly action: "fingerprint" | "challenge" | undefined
  readonly threeDsServerTransId: string
  readonly acsTransId: string
  /** The directory server's transaction id: the `transaction_id` of the result a payment presents. */
  readonly dsTransId: string
  readonly result: ProviderResult | undefined
  readonly createdAt: number
  readonly expiresAt: number
  /** The checkout session that paid with this result (one result pays at most one checkout). */
  readonly usedBySession: string | undefined
}

/** Random values the steps need, drawn by the caller (the domain stays deterministic). */
export interface Draws {
  readonly threeDsServerTransId: string
  readonly acsTransId: string
  readonly dsTransId: string
  /** 20 random bytes, base64: the authentication value (CAVV/AAV) of a successful authentication. */
  readonly cryptogram: string
}

export type NewSession = Pick<
  AuthenticationSession,
  | "id"
  | "clientKeyId"
  | "merchantId"
  | "checkoutSessionId"
  | "amount"
  | "currency"
  | "card"
  | "scenario"
  | "acquirerDetails"
  | "channelGiven"
  | "challengeNotificationUrl"
>

/** Only the challenge card asks for the device fingerprint; others authenticate with `fingerprint_completion: U`. */
export const createSession = (
  input: NewSession,
  draws: Draws,
  now: number,
  ttlMillis: number
): AuthenticationSession => ({
  ...input,
  status: input.scenario === "not_enrolled"
    ? "not_supported"
    : input.scenario === "challenge"
    ? "action_required"
    : "pending",
  action: input.scenario === "challenge" ? "fingerprint" : undefined,
  threeDsServerTransId: draws.threeDsServerTransId,
  acsTransId: draws.acsTransId,
  dsTransId: draws.dsTransId,
  result: undefined,
  createdAt: now,
  expiresAt: now + ttlMillis,
  usedBySession: undefined
})

/** A step the session's state does not allow, or a missing input; `param` is the request's JSONPath. */
export class AuthenticationStepRefused extends Data.TaggedError("AuthenticationStepRefused")<{
  readonly message: string
  readonly param?: string
}> {}

const isExpired = (session: AuthenticationSession, now: number) => now >= session.expiresAt

/** The session as it shows at `now`: `expired` once past its deadline, without any result. */
export const viewAt = (session: AuthenticationSession, now: number): AuthenticationSession =>
  isExpired(session, now) && session.status !== "expired"
    ? { ...session, status: "expired", action: undefined, result: undefined }
    : session

/** The electronic commerce indicator of a result, by scheme (`undefined`: none is sent). */
const eciOf = (brand: string, transStatus: ProviderResult["transStatus"]): string | undefined => {
  const mastercard = brand === "mastercard"
  switch (transStatus) {
    case "Y":
      return mastercard ? "02" : "05"
    case "A":
      return mastercard ? "01" : "06"
    case "N":
      return mastercard ? "00" : "07"
    default:
      return undefined
  }
}

const finished = (
  session: AuthenticationSession,
  transStatus: ProviderResult["transStatus"],
  draws: Draws,
  extra: Partial<ProviderResult> = {}
): AuthenticationSession => {
  const succeeded = transStatus === "Y" || transStatus === "A"
  const eci = eciOf(session.card.brand, transStatus)
  return {
    ...session,
    status: transStatus === "Y"
      ? "authenticated"
      : transStatus === "A"
      ? "attempted"
      : transStatus === "N"
      ? "not_authenticated"
      : transStatus === "R"
      ? "rejected"
      : "challenge_abandoned",
    action: undefined,
    result: {
      transStatus,
      ...(eci === undefined ? {} : { eci }),
      ...(succeeded ? { cryptogram: draws.cryptogram } : {}),
      ...extra
    }
  }
}

export interface AuthenticateStep {
  readonly fingerprintCompletion: "Y" | "N" | "U"
  readonly channelGiven: boolean
  readonly challengeNotificationUrl: string | undefined
  readonly checkoutSessionId: string | undefined
}

/** The AReq, only after create; channel data must have been given at create or now. */
export const authenticate = (
  current: AuthenticationSession,
  step: AuthenticateStep,
  draws: Draws,
  now: number
): Either.Either<AuthenticationSession, AuthenticationStepRefused> => {
  if (isExpired(current, now)) return Either.right(viewAt(current, now))
  const waiting = current.status === "pending" ||
    (current.status === "action_required" && current.action === "fingerprint")
  if (!waiting) {
    return Either.left(
      new AuthenticationStepRefused({
        message: `The authentication session is ${current.status}${
          current.action === "challenge" ? " (a challenge is waiting)" : ""
        }; only a created session can be authenticated.`
      })
    )
  }
  const session: AuthenticationSession = {
    ...current,
    channelGiven: current.channelGiven || step.channelGiven,
    challengeNotificationUrl: step.challengeNotificationUrl ?? current.challengeNotificationUrl,
    checkoutSessionId: step.checkoutSessionId ?? current.checkoutSessionId
  }
  if (!session.channelGiven) {
    return Either.left(
      new AuthenticationStepRefused({
        message: "Browser channel data is required, at create or here.",
        param: "$.channel"
      })
    )
  }
  switch (session.scenario) {
    case "frictionless":
      return Either.right(finished(session, "Y", draws))
    case "attempted":
      return Either.right(finished(session, "A", draws))
    case "fails":
      return Either.right(
        finished(session, "N", draws, { transStatusReason: "01", cardholderInfo: "Please contact your bank." })
      )
    case "challenge":
      if (session.challengeNotificationUrl === undefined) {
        return Either.left(
          new AuthenticationStepRefused({
            message: "challenge_notification_url is required (at create or here): the issuer asks for a challenge.",
            param: "$.challenge_notification_url"
          })
        )
      }
      return Either.right({ ...session, status: "action_required", action: "challenge" })
    case "not_enrolled":
      return Either.left(
        new AuthenticationStepRefused({ message: "The card is not enrolled in 3-D Secure (not_supported)." })
      )
  }
}

/** The challenge answered at the simulated ACS; no code abandons it. */
export const answerChallenge = (
  current: AuthenticationSession,
  code: string | undefined,
  draws: Draws,
  now: number
): Either.Either<AuthenticationSession, AuthenticationStepRefused> => {
  if (isExpired(current, now)) return Either.right(viewAt(current, now))
  if (current.status !== "action_required" || current.action !== "challenge") {
    return Either.left(new AuthenticationStepRefused({ message: "No challenge is waiting for this transaction." }))
  }
  if (code === undefined || code.trim() === "") return Either.right(finished(current, "U", draws))
  return Either.right(
    code.trim() === TEST_CHALLENGE_CODE
      ? finished(current, "Y", draws)
      : finished(current, "N", draws, { transStatusReason: "01", cardholderInfo: "The code was not correct." })
  )
}
