/**
 * The cancel body in every version: optional, and when sent held to the rules every body is (JSON
 * content type, no content coding, at most 1 MiB, well-formed JSON): a body that breaks them is
 * answered as update answers it, and the session is left as it was. 2025-09-29 defines no cancel
 * body, so the content of one that passes is ignored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { MAX_BODY_BYTES } from "../../../src/platform/http/request-body-bytes.ts"
import { clientOf, createRequest, idempotencyKey, LINE_ITEMS_VERSIONS, runApp } from "../../support/acp-fixtures.ts"
import { address, buyer, get, post, type RequestOptions } from "../../support/http.ts"

const VERSIONS = ["2025-09-29", ...LINE_ITEMS_VERSIONS] as const
type Version = typeof VERSIONS[number]

const createSession = (version: Version) =>
  version === "2025-09-29"
    ? Effect.map(
      post("/checkout_sessions", { items: [{ id: "mug-ceramic", quantity: 1 }], buyer, fulfillment_address: address }),
      (response) => response.body.id as string
    )
    : Effect.map(clientOf(version).created(createRequest(version)), (session) => session.id as string)

/** Each body cancel must refuse, with the options it is sent with, and the code it is refused with. */
const refusedBodies: ReadonlyArray<readonly [string, string, Omit<RequestOptions, "body">, number, string]> = [
  ["over 1 MiB", JSON.stringify({ pad: "x".repeat(MAX_BODY_BYTES) }), {}, 413, "request_too_large"],
  ["malformed JSON", "{\"intent_trace\": {", {}, 400, "invalid_json"],
  ["blank", " ", {}, 400, "invalid_json"],
  ["Content-Type: text/plain", "{}", { contentType: "text/plain" }, 400, "invalid_content_type"],
  ["no Content-Type", "{}", { contentType: false }, 400, "invalid_content_type"],
  ["Content-Encoding: gzip", "{}", { headers: { "content-encoding": "gzip" } }, 400, "invalid_content_type"],
  ["JSON nested too deep", "[".repeat(100) + "]".repeat(100), {}, 400, "invalid_json"]
]

/** `options` with this version's headers and a fresh Idempotency-Key (2026-04-17 requires one). */
const withVersion = (version: Version, options: Omit<RequestOptions, "body">) => ({
  ...options,
  version,
  headers: { "idempotency-key": idempotencyKey(), ...options.headers }
})

describe("cancel with a body that breaks the common rules", () => {
  for (const version of VERSIONS) {
    it.effect(`${version}: answered as update answers it (same status and error object), nothing canceled`, () =>
      runApp(Effect.gen(function*() {
        const id = yield* createSession(version)
        const before = yield* get(`/checkout_sessions/${id}`, { version })
        expect(before.body.status).not.toBe("canceled")
        for (const [what, body, options, status, code] of refusedBodies) {
          const cancel = yield* post(`/checkout_sessions/${id}/cancel`, body, withVersion(version, options))
          const update = yield* post(`/checkout_sessions/${id}`, body, withVersion(version, options))
          expect([cancel.status, cancel.body.code], what).toEqual([status, code])
          expect(cancel.body, what).toEqual(update.body)
          expect(cancel.status, what).toBe(update.status)
        }
        // A content coding says the body is not what was sent, even when there is none.
        const coded = yield* post(
          `/checkout_sessions/${id}/cancel`,
          undefined,
          withVersion(version, { headers: { "content-encoding": "br" } })
        )
        expect([coded.status, coded.body.code, coded.body.param]).toEqual([
          400,
          "invalid_content_type",
          "$.headers['Content-Encoding']"
        ])
        expect((yield* get(`/checkout_sessions/${id}`, { version })).body).toEqual(before.body)
      })))
  }

  it.effect("2025-09-29: a well-formed body is ignored, whatever it holds; no body cancels too", () =>
    runApp(Effect.gen(function*() {
      for (const body of ["{}", "{\"reason\":\"changed my mind\"}", "[]", "null"]) {
        const id = yield* createSession("2025-09-29")
        const canceled = yield* post(`/checkout_sessions/${id}/cancel`, body)
        expect([canceled.status, canceled.body.status], body).toEqual([200, "canceled"])
      }
      const id = yield* createSession("2025-09-29")
      const canceled = yield* post(`/checkout_sessions/${id}/cancel`)
      expect([canceled.status, canceled.body.status]).toEqual([200, "canceled"])
    })))
})
