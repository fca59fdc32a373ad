/**
 * A browser-like client of the merchant console for HTTP-level tests: it keeps the console's
 * cookies, reads the CSRF token of the last page it got, and posts forms as a browser does
 * (`application/x-www-form-urlencoded`, `Sec-Fetch-Site: same-origin`). Requests carry no API key
 * and no API-Version: the console is for browsers.
 */
import { Effect, Ref } from "effect"
import { MERCHANT_API_KEY, request, type TestResponse } from "./http.ts"

export interface ConsoleClient {
  readonly get: (path: string) => Effect.Effect<TestResponse, never, any>
  /** Posts `fields`, with the CSRF token of the last page read unless `fields` sets `csrf_token`. */
  readonly post: (
    path: string,
    fields: Record<string, string>,
    headers?: Record<string, string>
  ) => Effect.Effect<TestResponse, never, any>
  /** The cookies held, by name. */
  readonly cookies: Effect.Effect<ReadonlyMap<string, string>>
  /** The CSRF token of the last page read. */
  readonly csrfToken: Effect.Effect<string | undefined>
}

/** The value of the hidden `name` field of a page (the first one). */
export const hiddenField = (page: string, name: string): string | undefined =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1]

export const makeConsoleClient = Effect.gen(function*() {
  const jar = yield* Ref.make(new Map<string, string>())
  const token = yield* Ref.make<string | undefined>(undefined)
  const send = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    Effect.gen(function*() {
      const cookies = yield* Ref.get(jar)
      const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ")
      const response = yield* request(method, path, {
        auth: false,
        version: false,
        headers: { ...(cookie === "" ? {} : { cookie }), ...headers },
        ...(body === undefined ? {} : { body, contentType: "application/x-www-form-urlencoded" })
      })
      yield* Ref.update(jar, (held) => {
        const next = new Map(held)
        for (const line of response.headers.getSetCookie()) {
          const [pair] = line.split(";")
          const [name, value] = pair!.split("=") as [string, string]
          if (/max-age=0/i.test(line) || value === "") next.delete(name)
          else next.set(name, value)
        }
        return next
      })
      const found = hiddenField(response.text, "csrf_token")
      if (found !== undefined) yield* Ref.set(token, found)
      return response
    })
  const client: ConsoleClient = {
    get: (path) => send("GET", path),
    post: (path, fields, headers = {}) =>
      Effect.gen(function*() {
        const csrf = yield* Ref.get(token)
        const all = { ...(csrf === undefined ? {} : { csrf_token: csrf }), ...fields }
        return yield* send("POST", path, new URLSearchParams(all).toString(), {
          "sec-fetch-site": "same-origin",
          ...headers
        })
      }),
    cookies: Ref.get(jar),
    csrfToken: Ref.get(token)
  }
  return client
})

/** A client signed in with `apiKey` (the merchant key by default). */
export const signedInConsole = (apiKey = MERCHANT_API_KEY) =>
  Effect.gen(function*() {
    const client = yield* makeConsoleClient
    yield* client.get("/console/sign-in")
    const signedIn = yield* client.post("/console/sign-in", { api_key: apiKey })
    if (signedIn.status !== 303) throw new Error(`sign-in failed: ${signedIn.status} ${signedIn.text}`)
    return client
  })
