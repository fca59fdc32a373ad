/**
 * Console sessions and forms, checked by the handlers before they act (`docs/console.md`, "Forms and CSRF").
 * Only a merchant key (`MERCHANT_API_KEYS`) signs in, and a session opens the console only while its key is one.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Clock, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig } from "../../platform/config.ts"
import { mediaTypeOf, readRawBody } from "../../platform/http/request-body.ts"
import { apiKeyId, makeKeyResolver } from "../../platform/http/security.ts"
import { Ids } from "../../platform/ids.ts"
import { type ConsoleSession, ConsoleSessionStore } from "../console-session-store.ts"
import { CONSOLE_SESSION_TTL_MS, sameToken, SESSION_COOKIE, tokenHash } from "./cookies.ts"

export type FormRefusal = "unreadable" | "forged"

/** Why a sign-in opened no session: no configured key, or an agent key (the console is the merchant's). */
export type SignInRefusal = "unknown_key" | "agent_key"

/** A form a browser posted, as name → value (the first of repeated names). */
export type FormFields = ReadonlyMap<string, string>

export interface ConsoleAccessShape {
  /** Whether the console's cookies must be `Secure` (the service is reached over HTTPS). */
  readonly secureCookies: boolean
  readonly current: Effect.Effect<Option.Option<ConsoleSession>, StorageError, HttpServerRequest.HttpServerRequest>
  /** A new session for a merchant key (and the cookie's value); refused for any other text. */
  readonly signIn: (
    apiKey: string
  ) => Effect.Effect<
    Either.Either<{ readonly token: string; readonly session: ConsoleSession }, SignInRefusal>,
    StorageError
  >
  readonly signOut: (session: ConsoleSession) => Effect.Effect<void, StorageError>
  /** The posted form, if it is readable and carries `expectedToken` from this origin. */
  readonly readForm: (
    expectedToken: string | undefined
  ) => Effect.Effect<FormFields, FormRefusal, HttpServerRequest.HttpServerRequest>
}

export class ConsoleAccess extends Context.Tag("acp/ConsoleAccess")<ConsoleAccess, ConsoleAccessShape>() {}

const FORM_TYPE = "application/x-www-form-urlencoded"

/** A browser's word on where a request comes from; absent from older browsers and non-browsers. */
const fromThisOrigin = (request: HttpServerRequest.HttpServerRequest) => {
  const site = request.headers["sec-fetch-site"]
  return site === undefined || site === "same-origin" || site === "none"
}

export const ConsoleAccessLive = Layer.effect(
  ConsoleAccess,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* ConsoleSessionStore
    const ids = yield* Ids
    const resolveKey = makeKeyResolver(config)
    const merchantKeyIds = new Set(config.merchantApiKeys.map((key) => apiKeyId(Redacted.value(key))))

    const current = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const token = request.cookies[SESSION_COOKIE]
      if (token === undefined || token.length === 0) return Option.none<ConsoleSession>()
      const session = yield* store.find(tokenHash(token), yield* Clock.currentTimeMillis)
      // A session whose key is no longer a merchant key opens nothing.
      return Option.filter(session, (found) => merchantKeyIds.has(found.keyId))
    })

    const signIn = Effect.fnUntraced(function*(apiKey: string) {
      const client = resolveKey(apiKey)
      if (client === undefined) return Either.left<SignInRefusal>("unknown_key")
      if (client.kind !== "merchant") return Either.left<SignInRefusal>("agent_key")
      const now = yield* Clock.currentTimeMillis
      // Signing in is rare: a good moment to drop the sessions that ended.
      yield* store.removeExpired(now)
      const token = yield* ids.make("")
      const session: ConsoleSession = {
        tokenHash: tokenHash(token),
        csrfToken: yield* ids.make(""),
        keyId: client.keyId,
        createdAt: now,
        expiresAt: now + CONSOLE_SESSION_TTL_MS
      }
      yield* store.create(session)
      return Either.right({ token, session })
    })

    const readForm = Effect.fnUntraced(function*(expectedToken: string | undefined) {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (mediaTypeOf(request.headers["content-type"]) !== FORM_TYPE) {
        return yield* Effect.fail<FormRefusal>("unreadable")
      }
      const body = yield* Effect.mapError(readRawBody, (): FormRefusal => "unreadable")
      const fields = new Map<string, string>()
      for (const [name, value] of new URLSearchParams(new TextDecoder().decode(body))) {
        if (!fields.has(name)) fields.set(name, value)
      }
      const genuine = expectedToken !== undefined && sameToken(fields.get("csrf_token"), expectedToken) &&
        fromThisOrigin(request)
      return genuine ? fields : yield* Effect.fail<FormRefusal>("forged")
    })

    return ConsoleAccess.of({
      secureCookies: config.publicBaseUrl.startsWith("https:") || Option.isSome(config.tls),
      current,
      signIn,
      signOut: (session) => store.remove(session.tokenHash),
      readForm
    })
  })
)
