/**
 * Paying in the line-items format when the payment fails: a token that cannot pay (unknown, for
 * another session, over its allowance) is 422 at the credential's path; a declined card is 402 and
 * leaves a message on the session, which stays payable; nothing is charged twice.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Client,
  clientOf,
  completeRequest,
  createRequest,
  type Json,
  LINE_ITEMS_VERSIONS,
  runApp,
  updateRequest
} from "../../support/acp-fixtures.ts"
import { DELEGATE_PATH, delegateRequestWith } from "../../support/delegate.ts"
import { post } from "../../support/http.ts"

const TOKEN_PATH = "$.payment_data.instrument.credential.token"

const readySession = (client: Client) =>
  Effect.gen(function*() {
    const created = yield* client.created(createRequest(client.version))
    const updated = yield* client.update(created.id, updateRequest(client.version))
    expect(updated.body.status).toBe("ready_for_payment")
    return updated.body as Json
  })

/** A vt_ token of the test card that the processor declines. */
const decliningToken = (client: Client, sessionId: string) =>
  Effect.map(
    post(
      DELEGATE_PATH,
      delegateRequestWith((request) => {
        request.payment_method.number = "4000000000000002"
        request.payment_method.iin = "400000"
        request.payment_method.display_last4 = "0002"
        request.allowance.checkout_session_id = sessionId
        request.allowance.merchant_id = "merchant_test"
        request.allowance.max_amount = 100_000
      }),
      { version: client.version, headers: { "idempotency-key": `declining-${sessionId}` } }
    ),
    (response) => {
      expect(response.status).toBe(201)
      return response.body.id as string
    }
  )

describe.each(LINE_ITEMS_VERSIONS)("payment failures in %s", (version) => {
  const client = clientOf(version)

  it.effect("a token that cannot pay this session: 422 payment_declined at the credential's token", () =>
    runApp(Effect.gen(function*() {
      const session = yield* readySession(client)
      const other = yield* readySession(client)
      const tokens = {
        unknown: "vt_doesnotexist",
        otherSession: yield* client.delegate(other.id, 100_000),
        overAllowance: yield* client.delegate(session.id, 7183)
      }
      for (const token of Object.values(tokens)) {
        const response = yield* client.complete(session.id, completeRequest(version, token))
        expect([response.status, response.body.type, response.body.code, response.body.param]).toEqual([
          422,
          "invalid_request",
          "payment_declined",
          TOKEN_PATH
        ])
      }
      const read = (yield* client.get(session.id)).body
      expect(read.status).toBe("ready_for_payment")
      // The token of the session, within its allowance, pays.
      const paid = yield* client.complete(
        session.id,
        completeRequest(version, yield* client.delegate(session.id, 7184))
      )
      expect([paid.status, paid.body.status]).toEqual([200, "completed"])
    })))

  it.effect("a declined card: 402, a message on the session at $.payment_data; another card then pays", () =>
    runApp(Effect.gen(function*() {
      const session = yield* readySession(client)
      const declined = yield* client.complete(
        session.id,
        completeRequest(version, yield* decliningToken(client, session.id))
      )
      expect([declined.status, declined.body.type, declined.body.code]).toEqual([
        402,
        "processing_error",
        "payment_declined"
      ])
      const read = (yield* client.get(session.id)).body
      expect(read.status).toBe("ready_for_payment")
      expect(read.messages).toEqual([
        {
          type: "error",
          code: "payment_declined",
          param: "$.payment_data",
          content_type: "plain",
          content: expect.any(String)
        }
      ])
      const paid = yield* client.complete(
        session.id,
        completeRequest(version, yield* client.delegate(session.id, 7184))
      )
      expect([paid.status, paid.body.status, paid.body.messages]).toEqual([200, "completed", []])
    })))

  it.effect("a used token cannot pay again", () =>
    runApp(Effect.gen(function*() {
      const session = yield* readySession(client)
      const token = yield* client.delegate(session.id, 7184)
      expect((yield* client.complete(session.id, completeRequest(version, token))).status).toBe(200)
      const second = yield* readySession(client)
      const again = yield* client.complete(second.id, completeRequest(version, token))
      expect([again.status, again.body.code, again.body.param]).toEqual([422, "payment_declined", TOKEN_PATH])
    })))
})
