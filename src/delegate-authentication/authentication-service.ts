/**
 * The built-in issuer authentication provider (`docs/three-d-secure.md`): each step decided at the Clock's time and
 * written as a compare-and-set, with the request's answer. Only the creating API key sees a session; the buyer's
 * browser, at the simulated ACS, names it by its id and ACS transaction id.
 */
import { Clock, Context, Data, Effect, Either, Layer, Option, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type { StorageError } from "../db/storage-error.ts"
import { cardFingerprint } from "../delegate-payment/model/card-encryption.ts"
import { detectCardBrand } from "../delegate-payment/model/card-number.ts"
import { commitWithAnswer } from "../idempotency/idempotent-answer.ts"
import { AppConfig } from "../platform/config.ts"
import { Ids } from "../platform/ids.ts"
import { deriveVaultKeys } from "../platform/key-derivation.ts"
import { AuthenticationStore } from "./authentication-store.ts"
import {
  type AcquirerDetails,
  answerChallenge,
  authenticate,
  type AuthenticateStep,
  type AuthenticationSession,
  AuthenticationStepRefused,
  createSession,
  type Draws,
  scenarioOf,
  viewAt
} from "./model/authentication-session.ts"

export class AuthenticationSessionNotFound extends Data.TaggedError("AuthenticationSessionNotFound")<{
  readonly id: string
}> {}

export interface CreateAuthenticationInput {
  readonly merchantId: string
  readonly acquirerDetails: AcquirerDetails | undefined
  /** Never stored: only its keyed fingerprint, brand and last 4. */
  readonly card: { readonly number: string; readonly expMonth: string; readonly expYear: string }
  readonly amount: number
  readonly currency: string
  readonly channelGiven: boolean
  readonly checkoutSessionId: string | undefined
  readonly challengeNotificationUrl: string | undefined
}

export type AuthenticationStepError = AuthenticationSessionNotFound | AuthenticationStepRefused | StorageError

export interface IssuerAuthenticationShape {
  readonly create: (
    input: CreateAuthenticationInput,
    clientKeyId: string
  ) => Effect.Effect<AuthenticationSession, StorageError>
  readonly authenticate: (
    id: string,
    clientKeyId: string,
    step: AuthenticateStep
  ) => Effect.Effect<AuthenticationSession, AuthenticationStepError>
  readonly get: (
    id: string,
    clientKeyId: string
  ) => Effect.Effect<AuthenticationSession, AuthenticationSessionNotFound | StorageError>
  /** The challenge answered at the simulated ACS (`code` undefined: abandoned). */
  readonly answerChallenge: (
    id: string,
    acsTransId: string,
    code: string | undefined
  ) => Effect.Effect<AuthenticationSession, AuthenticationStepError>
  /** Found by id and ACS transaction id, as it shows now. */
  readonly forAcs: (
    id: string,
    acsTransId: string
  ) => Effect.Effect<AuthenticationSession, AuthenticationSessionNotFound | StorageError>
}

export class IssuerAuthentication
  extends Context.Tag("acp/IssuerAuthentication")<IssuerAuthentication, IssuerAuthenticationShape>()
{}

/** How long an authentication session, and the result it gives, lives. */
export const AUTHENTICATION_SESSION_TTL_SECONDS = 600

const draw = (): Draws => ({
  threeDsServerTransId: randomUUID(),
  acsTransId: randomUUID(),
  dsTransId: randomUUID(),
  cryptogram: randomBytes(20).toString("base64")
})

const answered = (session: AuthenticationSession) => Option.some(Either.right(session))

export const IssuerAuthenticationLive = Layer.effect(
  IssuerAuthentication,
  Effect.gen(function*() {
    const store = yield* AuthenticationStore
    const ids = yield* Ids
    const config = yield* AppConfig
    const { fingerprintKey } = yield* Effect.orDie(deriveVaultKeys(Redacted.value(config.vaultKey)))

    const owned = (id: string, clientKeyId: string) =>
      Effect.flatMap(store.get(id), (found) =>
        Option.isSome(found) && found.value.clientKeyId === clientKeyId
          ? Effect.succeed(found.value)
          : Effect.fail(new AuthenticationSessionNotFound({ id })))

    /** A lost compare-and-set is a refusal: read the session again. */
    const write = (current: AuthenticationSession, next: AuthenticationSession) =>
      next === current ? Effect.succeed(current) : commitWithAnswer(
        store.transaction,
        store.update(next, { status: current.status, action: current.action }),
        (written) => (written ? answered(next) : Option.none()),
        true
      ).pipe(
        Effect.flatMap((written) =>
          written
            ? Effect.succeed(next)
            : Effect.fail(
              new AuthenticationStepRefused({ message: "The authentication session changed meanwhile; read it again." })
            )
        )
      )

    const create: IssuerAuthenticationShape["create"] = Effect.fnUntraced(function*(input, clientKeyId) {
      const now = yield* Clock.currentTimeMillis
      const session = createSession(
        {
          id: yield* ids.make("authn_"),
          clientKeyId,
          merchantId: input.merchantId,
          checkoutSessionId: input.checkoutSessionId,
          amount: input.amount,
          currency: input.currency,
          card: {
            fingerprint: cardFingerprint(fingerprintKey, input.card.number, input.card.expMonth, input.card.expYear),
            brand: detectCardBrand(input.card.number),
            last4: input.card.number.slice(-4)
          },
          scenario: scenarioOf(input.card.number),
          acquirerDetails: input.acquirerDetails,
          channelGiven: input.channelGiven,
          challengeNotificationUrl: input.challengeNotificationUrl
        },
        draw(),
        now,
        AUTHENTICATION_SESSION_TTL_SECONDS * 1000
      )
      yield* commitWithAnswer(store.transaction, store.insert(session), () => answered(session), true)
      return session
    })

    const stepped = (
      current: AuthenticationSession,
      step: (
        session: AuthenticationSession,
        now: number
      ) => Either.Either<AuthenticationSession, AuthenticationStepRefused>
    ) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Either.match(step(current, now), {
          onLeft: Effect.fail,
          onRight: (next) => write(current, next)
        }))

    return IssuerAuthentication.of({
      create,
      authenticate: (id, clientKeyId, step) =>
        Effect.flatMap(
          owned(id, clientKeyId),
          (current) => stepped(current, (session, now) => authenticate(session, step, draw(), now))
        ),
      get: (id, clientKeyId) =>
        Effect.flatMap(
          owned(id, clientKeyId),
          (session) => Effect.map(Clock.currentTimeMillis, (now) => viewAt(session, now))
        ),
      answerChallenge: (id, acsTransId, code) =>
        Effect.flatMap(
          store.get(id),
          (found): Effect.Effect<AuthenticationSession, AuthenticationStepError> =>
            Option.isNone(found) || found.value.acsTransId !== acsTransId
              ? Effect.fail(new AuthenticationSessionNotFound({ id }))
              : stepped(found.value, (session, now) => answerChallenge(session, code, draw(), now))
        ),
      forAcs: (id, acsTransId) =>
        Effect.flatMap(store.get(id), (found) =>
          Option.isNone(found) || found.value.acsTransId !== acsTransId
            ? Effect.fail(new AuthenticationSessionNotFound({ id }))
            : Effect.map(Clock.currentTimeMillis, (now) => viewAt(found.value, now)))
    })
  })
)
