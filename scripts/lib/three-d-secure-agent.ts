/**
 * The agent's side of 3-D Secure, for the demo: authenticate a card with the issuer through the
 * Delegate Authentication API (ACP 2026-04-17) and turn the issuer's result into the
 * `authentication_result` a checkout complete presents. The buyer's part of a challenge (typing
 * the one-time code on the issuer's page) is played by posting the code to the page, as the
 * README's test cards describe.
 */
import { OUTCOME_OF_TRANS_STATUS } from "../../src/payments/model/issuer-authentication.ts"
import type { Call } from "./acp-client.ts"

/** The code the simulated issuer's challenge accepts. */
export const TEST_CHALLENGE_CODE = "123456"

export interface Authenticated {
  readonly id: string
  /** What happened, one line per step. */
  readonly steps: ReadonlyArray<string>
  /** The `authentication_result` of the complete request. */
  readonly result: Record<string, unknown>
}

const fail = (step: string, status: number, body: unknown): never => {
  throw new Error(`${step}: HTTP ${status}: ${JSON.stringify(body)}`)
}

/** `call` must send API-Version 2026-04-17 (the Delegate Authentication API's). */
export const authenticateCard = async (
  call: Call,
  card: { readonly number: string; readonly expMonth: string; readonly expYear: string },
  payment: {
    readonly sessionId: string
    readonly amount: number
    readonly currency: string
    readonly merchantId: string
  }
): Promise<Authenticated> => {
  const steps: Array<string> = []
  const created = await call("POST", "/delegate_authentication", {
    merchant_id: payment.merchantId,
    payment_method: {
      type: "card",
      number: card.number,
      exp_month: card.expMonth,
      exp_year: card.expYear,
      name: "Ada Lovelace"
    },
    amount: { value: payment.amount, currency: payment.currency.toUpperCase() },
    checkout_session_id: payment.sessionId,
    channel: {
      type: "browser",
      browser: {
        accept_header: "text/html",
        ip_address: "203.0.113.7",
        javascript_enabled: false,
        language: "en-US",
        user_agent: "scripts/demo.ts"
      }
    },
    challenge_notification_url: "https://agent.example/3ds/challenge-complete"
  })
  if (created.status !== 201) fail("create authentication", created.status, created.body)
  const id = created.body.authentication_session_id as string
  steps.push(`authentication ${id} · ${created.body.status}`)
  const deviceChecked = created.body.status === "action_required"
  if (deviceChecked) steps.push("device check (3DS Method) requested by the issuer: done")
  const step = await call("POST", `/delegate_authentication/${id}/authenticate`, {
    fingerprint_completion: deviceChecked ? "Y" : "U"
  })
  if (step.status !== 200) fail("authenticate", step.status, step.body)
  steps.push(`authenticate → ${step.body.status}`)
  if (step.body.status === "action_required") {
    const challenge = step.body.action.challenge
    steps.push(`challenge on the issuer's page ${challenge.acs_url}: the buyer types ${TEST_CHALLENGE_CODE}`)
    const creq = Buffer.from(JSON.stringify({
      threeDSServerTransID: challenge.three_ds_server_trans_id,
      acsTransID: challenge.acs_trans_id,
      messageVersion: challenge.message_version,
      messageType: "CReq"
    })).toString("base64url")
    const answered = await fetch(challenge.acs_url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ creq, code: TEST_CHALLENGE_CODE }).toString()
    })
    if (answered.status !== 200) fail("answer the challenge", answered.status, await answered.text())
  }
  const read = await call("GET", `/delegate_authentication/${id}`)
  if (read.status !== 200) fail("read the authentication", read.status, read.body)
  const issuer = read.body.authentication_result
  steps.push(
    `result: trans_status ${issuer.trans_status} · ECI ${issuer.electronic_commerce_indicator ?? "none"} · ${
      issuer.three_ds_cryptogram === undefined ? "no cryptogram" : "cryptogram"
    }`
  )
  const outcome = OUTCOME_OF_TRANS_STATUS[issuer.trans_status] ?? "processing_error"
  const result = issuer.three_ds_cryptogram === undefined ? { outcome } : {
    outcome,
    outcome_details: {
      three_ds_cryptogram: issuer.three_ds_cryptogram,
      electronic_commerce_indicator: issuer.electronic_commerce_indicator,
      transaction_id: issuer.transaction_id,
      version: issuer.version
    }
  }
  return { id, steps, result }
}
