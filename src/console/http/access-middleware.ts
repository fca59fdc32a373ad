/** Console sessions and forms, checked by the handlers before they act (`docs/console.md`, "Forms and CSRF"). */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { AppConfig } from "../../platform/config.ts"
import { mediaTypeOf, readRawBody } from "../../platform/http/request-body.ts"
import { makeApiKeyResolver } from "../../platform/http/security.ts"
import { Ids } from "../../platform/ids.ts"
import { type ConsoleSession, ConsoleSessionStore } from "../console-session-store.ts"
import { CONSOLE_SESSION_TTL_MS, sameToken, SESSION_COOKIE, tokenHash } from "./cookies.ts"

export type FormRefusal = "unreadable" | "forged"

/** A form a browser posted, as name → value (the first of repeated names). */
export type FormFields = ReadonlyMap<string, string>

export interface ConsoleAccessShape {
  /** Whether the console's cookies must be `Secure` (the service is reached over HTTPS). */
  readonly secureCookies: boolean
  readonly current: Effect.Effect<Option.Option<ConsoleSession>, StorageError, HttpServerRequest.HttpServerRequest>
  /** A new session for a configured API key (and the cookie's value); none for any other text. */
  readonly signIn: (
    apiKey: string
  ) => Effect.Effect<Option.Option<{ readonly token: string; readonly session: ConsoleSession }>, StorageError>
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
    const resolveKey = makeApiKeyResolver(config.apiKeys)

    const current = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const token = request.cookies[SESSION_COOKIE]
      if (token === undefined || token.length === 0) return Option.none<ConsoleSession>()
      return yield* store.find(tokenHash(token), yield* Clock.currentTimeMillis)
    })

    const signIn = Effect.fnUntraced(function*(apiKey: string) {
      const keyId = resolveKey(apiKey)
      if (keyId === undefined) return Option.none()
      const now = yield* Clock.currentTimeMillis
      // Signing in is rare: a good moment to drop the sessions that ended.
      yield* store.removeExpired(now)
      const token = yield* ids.make("")
      const session: ConsoleSession = {
        tokenHash: tokenHash(token),
        csrfToken: yield* ids.make(""),
        keyId,
        createdAt: now,
        expiresAt: now + CONSOLE_SESSION_TTL_MS
      }
      yield* store.create(session)
      return Option.some({ token, session })
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
