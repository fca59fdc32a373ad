/**
 * Signing in to the merchant console over HTTP (`test/support/console-client.ts`): only a merchant
 * key opens a session (an agent key is refused with its own message), the sign-in form's own
 * token, signing out, and how long a session lasts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { ConsoleSessionStore } from "../../src/console/console-session-store.ts"
import { tokenHash } from "../../src/console/http/cookies.ts"
import { apiKeyId } from "../../src/platform/http/security.ts"
import { makeConsoleClient, signedInConsole } from "../support/console-client.ts"
import { API_KEY, MERCHANT_API_KEY, request, testApp } from "../support/http.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, testApp()) as Effect.Effect<A, E, never>

describe("signing in to the console", () => {
  it.effect("pages redirect to sign-in; the sign-in form sets a short-lived HttpOnly, SameSite=Strict cookie", () =>
    run(Effect.gen(function*() {
      const client = yield* makeConsoleClient
      for (const path of ["/console", "/console/orders", "/console/stock"]) {
        const page = yield* client.get(path)
        expect(page.status).toBe(303)
        expect(page.headers.get("location")).toBe("/console/sign-in")
      }
      const form = yield* client.get("/console/sign-in")
      expect(form.status).toBe(200)
      expect(form.headers.get("content-type")).toMatch(/^text\/html/)
      expect(form.headers.get("content-security-policy")).toMatch(/default-src 'none'.*form-action 'self'/)
      expect(form.headers.get("content-security-policy")).not.toContain("script-src")
      expect(form.headers.get("cache-control")).toBe("no-store")
      const [cookie] = form.headers.getSetCookie()
      expect(cookie).toMatch(
        /^acp_console_sign_in=\w{22}; Max-Age=900; Path=\/console; HttpOnly; Secure; SameSite=Strict$/
      )
    })))

  it.effect("a merchant API key opens a session; anything else does not", () =>
    run(Effect.gen(function*() {
      const client = yield* makeConsoleClient
      yield* client.get("/console/sign-in")
      const wrong = yield* client.post("/console/sign-in", { api_key: "sk_wrong" })
      expect(wrong.status).toBe(401)
      expect(wrong.text).toContain("That is not an API key of this service.")
      expect(wrong.text).not.toContain("sk_wrong")
      expect((yield* client.cookies).has("acp_console")).toBe(false)
      const right = yield* client.post("/console/sign-in", { api_key: MERCHANT_API_KEY })
      expect(right.status).toBe(303)
      expect(right.headers.get("location")).toBe("/console")
      const session = right.headers.getSetCookie().find((line) => line.startsWith("acp_console="))!
      expect(session).toMatch(/^acp_console=\w{22}; Max-Age=28800; Path=\/console; HttpOnly; Secure; SameSite=Strict$/)
      const home = yield* client.get("/console")
      expect(home.headers.get("location")).toBe("/console/orders")
      expect((yield* client.get("/console/orders")).status).toBe(200)
    })))

  it.effect("an agent API key is refused with its own message, 403, and opens no session", () =>
    run(Effect.gen(function*() {
      const client = yield* makeConsoleClient
      yield* client.get("/console/sign-in")
      const agent = yield* client.post("/console/sign-in", { api_key: API_KEY })
      expect(agent.status).toBe(403)
      expect(agent.text).toContain(
        "That is an agent API key (API_KEYS): the console takes a merchant API key (MERCHANT_API_KEYS)."
      )
      expect(agent.text).not.toContain(API_KEY)
      expect((yield* client.cookies).has("acp_console")).toBe(false)
      const page = yield* client.get("/console/orders")
      expect(page.status).toBe(303)
      expect(page.headers.get("location")).toBe("/console/sign-in")
      // The page offers the form again: the merchant key then signs in.
      expect((yield* client.post("/console/sign-in", { api_key: MERCHANT_API_KEY })).status).toBe(303)
      expect((yield* client.get("/console/orders")).status).toBe(200)
    })))

  it.effect("a session opens the console only while its key is a merchant key", () =>
    run(Effect.gen(function*() {
      const store = yield* ConsoleSessionStore
      const now = yield* Clock.currentTimeMillis
      const open = (keyId: string, token: string) =>
        Effect.gen(function*() {
          yield* store.create({
            tokenHash: tokenHash(token),
            csrfToken: "c".repeat(22),
            keyId,
            createdAt: now,
            expiresAt: now + 3_600_000
          })
          const page = yield* request("GET", "/console/orders", {
            auth: false,
            version: false,
            headers: { cookie: `acp_console=${token}` }
          })
          return page.status
        })
      expect(yield* open(apiKeyId(MERCHANT_API_KEY), "m".repeat(22))).toBe(200)
      // An agent key's session, or one of a key no longer in MERCHANT_API_KEYS, opens nothing.
      expect(yield* open(apiKeyId(API_KEY), "a".repeat(22))).toBe(303)
      expect(yield* open(apiKeyId("mk_rotated_out"), "r".repeat(22))).toBe(303)
    })))

  it.effect("the sign-in form is refused without its own cookie's token (no other site can sign a browser in)", () =>
    run(Effect.gen(function*() {
      const client = yield* makeConsoleClient
      const page = yield* client.post("/console/sign-in", { api_key: MERCHANT_API_KEY, csrf_token: "x".repeat(22) })
      expect(page.status).toBe(403)
      expect((yield* client.cookies).has("acp_console")).toBe(false)
    })))

  it.effect("signing out ends the session: its cookie opens nothing any more", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      yield* client.get("/console/orders")
      const cookie = (yield* client.cookies).get("acp_console")!
      const out = yield* client.post("/console/sign-out", {})
      expect(out.status).toBe(303)
      expect(out.headers.get("location")).toBe("/console/sign-in")
      const replayed = yield* request("GET", "/console/orders", {
        auth: false,
        version: false,
        headers: { cookie: `acp_console=${cookie}` }
      })
      expect(replayed.status).toBe(303)
      expect(replayed.headers.get("location")).toBe("/console/sign-in")
    })))

  it.effect("a session ends eight hours after sign-in", () =>
    run(Effect.gen(function*() {
      const client = yield* signedInConsole()
      yield* TestClock.adjust("7 hours")
      expect((yield* client.get("/console/orders")).status).toBe(200)
      yield* TestClock.adjust("1 hour")
      expect((yield* client.get("/console/orders")).headers.get("location")).toBe("/console/sign-in")
    })))
})
