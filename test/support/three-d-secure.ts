/**
 * The agent's side of 3-D Secure in tests, through HTTP as an agent does it: a `vt_` token for one
 * of the 3-D Secure test cards, and an issuer authentication made with the Delegate Authentication
 * API (device check, challenge answered on the simulated ACS page), turned into the
 * `authentication_result` a complete request presents.
 */
import { Effect } from "effect"
import { OUTCOME_OF_TRANS_STATUS } from "../../src/payments/model/issuer-authentication.ts"
import type { Json } from "./acp-fixtures.ts"
import { idempotencyKey } from "./acp-fixtures.ts"
import { DELEGATE_PATH, delegateRequestWith } from "./delegate.ts"
import { createReadySession, request } from "./http.ts"

export const CHALLENGE_CARD = "4000002760003184"
export const FRICTIONLESS_CARD = "4000000000003220"
export const ATTEMPTED_CARD = "4000000000003097"
export const FAILING_CARD = "4000000000003063"
export const PLAIN_CARD = "4242424242424242"

const AUTHENTICATION_VERSION = "2026-04-17"
const NOTIFY = "https://agent.example/3ds/challenge-callback"

export const browserChannel = {
  type: "browser",
  browser: {
    accept_header: "text/html",
    ip_address: "203.0.113.7",
    javascript_enabled: false,
    language: "en-US",
    user_agent: "Mozilla/5.0 (agent)"
  }
}

/**
 * A `vt_` token of `number` for `sessionId`, allowing `maxAmount`, in `version` (201 expected);
 * `edit` changes the request further.
 */
export const delegateCard = (
  version: string,
  sessionId: string,
  number: string,
  maxAmount: number,
  edit: (body: Json) => void = () => {}
) =>
  Effect.map(
    request("POST", DELEGATE_PATH, {
      version,
      headers: { "idempotency-key": idempotencyKey() },
      body: delegateRequestWith((body) => {
        body.payment_method.number = number
        body.payment_method.iin = number.slice(0, 6)
        body.payment_method.display_last4 = number.slice(-4)
        body.allowance.checkout_session_id = sessionId
        body.allowance.merchant_id = "merchant_test"
        body.allowance.max_amount = maxAmount
        edit(body)
      })
    }),
    (response) => {
      if (response.status !== 201) throw new Error(`delegate failed: ${response.status} ${response.text}`)
      return response.body.id as string
    }
  )

const authn = (method: "GET" | "POST", path: string, body?: unknown) =>
  request(method, path, {
    version: AUTHENTICATION_VERSION,
    ...(body === undefined ? {} : { body, headers: { "idempotency-key": idempotencyKey() } })
  })

export interface Authentication {
  /** The Delegate Authentication session. */
  readonly id: string
  /** What a complete request presents. */
  readonly result: Json
}

/**
 * Authenticates `number` for the checkout session `sessionId` and `amount` (minor units of
 * `currency`) with the built-in provider: the challenge card is device-checked and challenged,
 * and the challenge answered with `code` (the test code by default).
 */
export const authenticateCard = (
  options: {
    readonly number: string
    readonly sessionId: string
    readonly amount: number
    readonly currency?: string
    readonly code?: string
    /** The merchant the authentication is for (default: the test merchant, whose tokens pay). */
    readonly merchantId?: string
  }
) =>
  Effect.gen(function*() {
    const created = yield* authn("POST", "/delegate_authentication", {
      merchant_id: options.merchantId ?? "merchant_test",
      payment_method: { type: "card", number: options.number, exp_month: "12", exp_year: "2030", name: "Jane Doe" },
      amount: { value: options.amount, currency: options.currency ?? "USD" },
      checkout_session_id: options.sessionId,
      channel: browserChannel,
      challenge_notification_url: NOTIFY
    })
    if (created.status !== 201) throw new Error(`authentication failed: ${created.status} ${created.text}`)
    const id = created.body.authentication_session_id as string
    const step = yield* authn("POST", `/delegate_authentication/${id}/authenticate`, {
      fingerprint_completion: created.body.status === "action_required" ? "Y" : "U"
    })
    if (step.body.status === "action_required") {
      const challenge = step.body.action.challenge
      const creq = Buffer.from(JSON.stringify({
        threeDSServerTransID: challenge.three_ds_server_trans_id,
        acsTransID: challenge.acs_trans_id,
        messageVersion: "2.2.0",
        messageType: "CReq"
      })).toString("base64url")
      yield* request("POST", new URL(challenge.acs_url).pathname, {
        body: new URLSearchParams({ creq, code: options.code ?? "123456" }).toString(),
        contentType: "application/x-www-form-urlencoded",
        auth: false,
        version: false
      })
    }
    const read = (yield* authn("GET", `/delegate_authentication/${id}`)).body.authentication_result
    const outcome = OUTCOME_OF_TRANS_STATUS[read.trans_status]!
    const result: Json = read.three_ds_cryptogram === undefined
      ? { outcome }
      : {
        outcome,
        outcome_details: {
          three_ds_cryptogram: read.three_ds_cryptogram,
          electronic_commerce_indicator: read.electronic_commerce_indicator,
          transaction_id: read.transaction_id,
          version: read.version
        }
      }
    return { id, result } satisfies Authentication
  })

/** A session of `items` (bought by `buyer`, if given) paid with the plain test card in 2025-09-29: its order summary. */
export const paidOrder = (
  items: ReadonlyArray<{ id: string; quantity: number }> = [{ id: "tshirt-classic", quantity: 2 }],
  buyer?: { readonly first_name: string; readonly last_name: string; readonly email: string }
) =>
  Effect.gen(function*() {
    const session = yield* createReadySession(items)
    if (buyer !== undefined) {
      const updated = yield* request("POST", `/checkout_sessions/${session.id}`, {
        version: "2025-09-29",
        body: { buyer }
      })
      if (updated.status !== 200) throw new Error(`update failed: ${updated.status} ${updated.text}`)
    }
    const total = session.totals.find((t) => t.type === "total")!.amount
    const token = yield* delegateCard("2025-09-29", session.id, PLAIN_CARD, total)
    const paid = yield* request("POST", `/checkout_sessions/${session.id}/complete`, {
      version: "2025-09-29",
      body: {
        payment_data: { handler_id: "card_tokenized", instrument: { type: "card", credential: { type: "spt", token } } }
      }
    })
    if (paid.status !== 200) throw new Error(`complete failed: ${paid.status} ${paid.text}`)
    return paid.body.order as { id: string; checkout_session_id: string; permalink_url: string }
  })
