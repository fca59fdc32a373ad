/**
 * A UCP agent of our own for the in-process app: its profile served by a local server (127.0.0.1, an
 * allowed profile host), and its REST calls with `UCP-Agent`, a fresh `Idempotency-Key` on each POST and
 * PUT, and our agent key.
 */
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { platformProfile } from "../ucp/profile-fixtures.ts"
import { json, profileServer } from "../ucp/profile-server.ts"
import { DELEGATE_PATH, delegateRequestWith } from "./delegate.ts"
import { post, request, type RequestOptions, testApp, type TestAppOptions } from "./http.ts"
import { testConfig } from "./test-config.ts"

export type Json = Record<string, any>

export const PROFILE_PATH = "/profiles/agent.json"

/** The app, its UCP profile fetches allowed to reach 127.0.0.1 (where the tests' profiles are served). */
export const ucpTestApp = (options: TestAppOptions = {}) =>
  testApp({
    ...options,
    config: {
      ...options.config,
      ucp: { ...testConfig().ucp, profileAllowedHosts: [{ host: "127.0.0.1", port: undefined }] }
    }
  })

/** Serves `profile` for the test's scope; the agent names it in every request. */
export const ucpAgent = (profile: unknown = platformProfile()) =>
  Effect.map(profileServer(json(profile)), (server) => {
    const agentHeader = `profile="${server.origin}${PROFILE_PATH}"`
    const send = (method: string, path: string, body?: unknown, options: RequestOptions = {}) =>
      request(method, path, {
        version: false,
        ...options,
        headers: {
          "ucp-agent": agentHeader,
          ...(method === "POST" || method === "PUT" ? { "idempotency-key": randomUUID() } : {}),
          ...options.headers
        },
        ...(body === undefined ? {} : { body })
      })
    return {
      server,
      agentHeader,
      send,
      create: (body: Json, options?: RequestOptions) => send("POST", "/ucp/checkout-sessions", body, options),
      get: (id: string, options?: RequestOptions) => send("GET", `/ucp/checkout-sessions/${id}`, undefined, options),
      update: (id: string, body: Json, options?: RequestOptions) =>
        send("PUT", `/ucp/checkout-sessions/${id}`, body, options),
      complete: (id: string, body: Json, options?: RequestOptions) =>
        send("POST", `/ucp/checkout-sessions/${id}/complete`, body, options),
      cancel: (id: string, options?: RequestOptions) =>
        send("POST", `/ucp/checkout-sessions/${id}/cancel`, undefined, options),
      /** The test card tokenized through the Delegate Payment API for checkout `id`, within `maxAmount`. */
      tokenize: (id: string, maxAmount: number) =>
        Effect.map(
          post(
            DELEGATE_PATH,
            delegateRequestWith((delegate) => {
              delegate.allowance.checkout_session_id = id
              delegate.allowance.merchant_id = "merchant_test"
              delegate.allowance.max_amount = maxAmount
            }),
            { version: "2026-04-17", headers: { "idempotency-key": randomUUID() } }
          ),
          (response) => {
            if (response.status !== 201) throw new Error(`tokenize failed: ${response.status} ${response.text}`)
            return response.body.id as string
          }
        )
    }
  })

/** Where the tests ship to, in UCP's postal address. */
export const destination = {
  first_name: "Ada",
  last_name: "Lovelace",
  street_address: "1 Main Street",
  address_locality: "New York",
  address_region: "NY",
  address_country: "US",
  postal_code: "10001"
}

export const ucpBuyer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }

export const instrument = (token: string, handlerId = "card_tokenized") => ({
  id: "instr_1",
  handler_id: handlerId,
  type: "card",
  selected: true,
  display: { brand: "visa", last_digits: "4242" },
  credential: { type: "token", token }
})

export const amountOf = (totals: ReadonlyArray<{ type: string; amount: number }>, type: string) =>
  totals.find((total) => total.type === type)?.amount

export type UcpAgent = Effect.Effect.Success<ReturnType<typeof ucpAgent>>

export const withApp = <A, E>(effect: Effect.Effect<A, E, any>, options?: TestAppOptions) =>
  Effect.provide(effect, Layer.fresh(ucpTestApp(options))) as Effect.Effect<A, E, never>
