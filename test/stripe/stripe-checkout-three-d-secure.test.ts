/**
 * 3-D Secure with a Stripe shared payment token, through HTTP against the fake Stripe: the issuer's
 * `requires_action` at the confirm puts the session in `authentication_required` (the PaymentIntent
 * canceled, nothing charged) where the version and agent can authenticate, else declines it; the
 * agent's result pays with a new attempt whose confirm carries Stripe's third-party 3-D Secure
 * fields; a result that did not authenticate is declined without a call to Stripe; a crash of the
 * paying attempt, then the retry, charges once; a webhook's settlement meanwhile leaves the attempt
 * to its request; with the account's import of results off, a clear decline.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { CheckoutService } from "../../src/checkout/checkout-service.ts"
import { CheckoutStore } from "../../src/checkout/checkout-store.ts"
import { PENDING_PAYMENT_GRACE_MILLIS, type Settlement } from "../../src/checkout/payment-settlement.ts"
import { OrderStore } from "../../src/orders/order-store.ts"
import { FaultInjection } from "../../src/platform/fault-injection.ts"
import {
  amountOf,
  type Client,
  clientOf,
  completeRequest,
  createRequest,
  type Json,
  LINE_ITEMS_VERSIONS,
  updateRequest
} from "../support/acp-fixtures.ts"
import { makePointCrashes } from "../support/faults.ts"
import { get, post } from "../support/http.ts"
import {
  intentsOf,
  readyWithToken,
  runWith,
  sptPayment,
  STRIPE_HANDLER,
  stripeConfig,
  succeededOf,
  useFakeStripe
} from "./stripe-checkout-fixtures.ts"

const fake = useFakeStripe()

const CONFIRM = /^\/v1\/payment_intents\/pi_[^/]+\/confirm$/

/** What an agent's own 3-D Secure provider returns for an authentication. */
const agentResult = (outcome = "authenticated") => ({
  outcome,
  outcome_details: {
    three_ds_cryptogram: randomBytes(20).toString("base64"),
    electronic_commerce_indicator: outcome === "authenticated" ? "05" : "06",
    transaction_id: randomUUID(),
    version: "2.2.0"
  }
})

const attemptOf = (id: string) =>
  Effect.flatMap(CheckoutStore, (store) => store.readSessionForPayment(id)).pipe(
    Effect.map((read) => Option.getOrUndefined(Option.flatMap(read, (found) => found.latestAttempt)))
  )

const orderCount = Effect.flatMap(OrderStore, (orders) => orders.listEvents({ limit: 100 })).pipe(
  Effect.map((events) => events.filter((event) => event.type === "order_create").length)
)

/** A ready session of `client` (`create` overrides the create request) and a token whose issuer asks for 3-D Secure. */
const readyForStripe = (client: Client, create: Json = {}) =>
  Effect.gen(function*() {
    const created = yield* client.created(createRequest(client.version, create))
    const updated = yield* client.update(created.id, updateRequest(client.version))
    expect(updated.body.status).toBe("ready_for_payment")
    const token = fake().grantToken({ behavior: "requires_action" }).id
    return { id: created.id as string, total: amountOf(updated.body.totals, "total")!, token }
  })

const completeWith = (client: Client, id: string, token: string, overrides: Json = {}) =>
  client.complete(id, completeRequest(client.version, token, { payment_data: sptPayment(token), ...overrides }))

/** The session in `authentication_required` after the issuer asked at the confirm. */
const requiringAuthentication = (client: Client) =>
  Effect.gen(function*() {
    const ready = yield* readyForStripe(client)
    const answer = yield* completeWith(client, ready.id, ready.token)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.status).toBe("authentication_required")
    return { ...ready, session: answer.body as Json }
  })

const threeDSecureSent = (sessionId: string, sequence: number) =>
  fake().requests({ method: "POST" }).filter((r) =>
    CONFIRM.test(r.path) && r.idempotencyKey === `${sessionId}:${sequence}:confirm`
  ).map((r) => (r.params.payment_method_options as any)?.card?.three_d_secure)

describe.each(LINE_ITEMS_VERSIONS)("Stripe 3-D Secure in %s", (version) => {
  const client = clientOf(version)

  it.effect("requires_action: authentication_required with its metadata, the PaymentIntent canceled, nothing charged", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { id, session } = yield* requiringAuthentication(client)
        expect(session.authentication_metadata).toMatchObject({
          acquirer_details: {
            acquirer_bin: "400000",
            acquirer_country: "US",
            acquirer_merchant_id: "merchant_test",
            merchant_name: "merchant_test"
          },
          // The granted token's card (pm_card_authenticationRequired is a Visa).
          directory_server: "visa",
          flow_preference: { type: "frictionless", frictionless: { type: "low_risk" } }
        })
        if (version === "2026-01-30") expect(session.authentication_metadata.channel.type).toBe("browser")
        else expect(session.authentication_metadata.channel).toBeUndefined()
        expect(session.order).toBeUndefined()
        expect(intentsOf(fake(), id).map((pi) => pi.status)).toEqual(["canceled"])
        expect(succeededOf(fake(), id)).toHaveLength(0)
        expect((yield* attemptOf(id))?.state).toBe("declined")
        const read = yield* client.get(id)
        expect(read.body.status).toBe("authentication_required")
        expect(read.body.authentication_metadata).toEqual(session.authentication_metadata)
      })
    ))

  for (const [outcome, ares] of [["authenticated", "Y"], ["attempt_acknowledged", "A"]] as const) {
    it.effect(`${outcome}: a new attempt confirmed with Stripe's three_d_secure fields (${ares}) pays`, () =>
      runWith(
        fake(),
        Effect.gen(function*() {
          const { id, token, total } = yield* requiringAuthentication(client)
          const result = agentResult(outcome)
          const paid = yield* completeWith(client, id, token, { authentication_result: result })
          expect(paid.status, paid.text).toBe(200)
          expect(paid.body.status).toBe("completed")
          expect(paid.body.order.id).toMatch(/^ord_/)
          expect(paid.body.authentication_metadata).toBeUndefined()
          const intents = intentsOf(fake(), id)
          expect(intents.map((pi) => [pi.status, pi.metadata.payment_attempt])).toEqual([
            ["canceled", `${id}:1`],
            ["succeeded", `${id}:2`]
          ])
          expect(intents[1]!.amount).toBe(total)
          const details = result.outcome_details
          expect(threeDSecureSent(id, 2)).toEqual([{
            cryptogram: details.three_ds_cryptogram,
            transaction_id: details.transaction_id,
            version: "2.2.0",
            electronic_commerce_indicator: details.electronic_commerce_indicator,
            ares_trans_status: ares
          }])
          // Never with the create, nor the first attempt's confirm.
          expect(threeDSecureSent(id, 1)).toEqual([undefined])
          const create = fake().requests({ method: "POST", path: "/v1/payment_intents" }).find((r) =>
            r.idempotencyKey === `${id}:2:create`
          )
          expect(create?.params.payment_method_options).toBeUndefined()
          const charge = fake().charges().find((c) => c.payment_intent === intents[1]!.id)
          expect(charge?.payment_method_details.card.three_d_secure).toMatchObject({
            result: outcome,
            transaction_id: details.transaction_id
          })
          expect(yield* orderCount).toBe(1)
        })
      ))
  }

  it.effect("denied: 402 without a call to Stripe, nothing charged, the session payable again", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { id, token } = yield* requiringAuthentication(client)
        const before = fake().requests().length
        const denied = yield* completeWith(client, id, token, { authentication_result: { outcome: "denied" } })
        expect(denied.status).toBe(402)
        expect(denied.body).toMatchObject({ type: "processing_error", code: "payment_declined" })
        expect(fake().requests().length).toBe(before)
        expect(intentsOf(fake(), id).map((pi) => pi.status)).toEqual(["canceled"])
        const read = yield* client.get(id)
        expect(read.body.status).toBe("ready_for_payment")
        expect(read.body.authentication_metadata).toBeUndefined()
        expect(read.body.messages).toContainEqual(
          expect.objectContaining({ code: "payment_declined", param: "$.authentication_result" })
        )
        expect(yield* orderCount).toBe(0)
      })
    ))
})

describe("Stripe 3-D Secure where it cannot be carried out: the clear decline", () => {
  it.effect("an agent without 3ds (2026-04-17): 402, the PaymentIntent canceled, payable again", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const client = clientOf("2026-04-17")
        const { id, token } = yield* readyForStripe(client, {
          capabilities: { interventions: { supported: ["biometric"], display_context: "webview" } }
        })
        const declined = yield* completeWith(client, id, token)
        expect(declined.status).toBe(402)
        expect(declined.body.code).toBe("payment_declined")
        expect(declined.body.message).toMatch(/3-D Secure.*did not declare 3ds/)
        expect(intentsOf(fake(), id).map((pi) => pi.status)).toEqual(["canceled"])
        expect((yield* client.get(id)).body.status).toBe("ready_for_payment")
      })
    ))

  it.effect("2025-09-29: 402 naming the version, the PaymentIntent canceled, payable again", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const { session } = yield* readyWithToken(fake())
        const token = fake().grantToken({ behavior: "requires_action" }).id
        const declined = yield* post(`/checkout_sessions/${session.id}/complete`, {
          payment_data: sptPayment(token)
        }, { version: "2025-09-29" })
        expect(declined.status).toBe(402)
        expect(declined.body.message).toMatch(/3-D Secure.*API version/)
        expect(intentsOf(fake(), session.id).map((pi) => pi.status)).toEqual(["canceled"])
        expect((yield* get(`/checkout_sessions/${session.id}`)).body.status).toBe("ready_for_payment")
      })
    ))
})

describe("Stripe 3-D Secure: a crash of the paying attempt", () => {
  for (const point of ["stripe.after-create", "stripe.after-confirm"] as const) {
    it.effect(`at ${point}, then the client's retry with the result: one charge, one order`, () => {
      const crashes = makePointCrashes()
      const client = clientOf("2026-04-17")
      return runWith(
        fake(),
        Effect.gen(function*() {
          const { id, token } = yield* requiringAuthentication(client)
          const result = agentResult()
          yield* crashes.arm(point)
          const died = yield* completeWith(client, id, token, { authentication_result: result })
          expect(died.status).toBe(500)
          expect(crashes.crashes()).toEqual([point])
          expect((yield* attemptOf(id))?.state).toBe("pending")
          const paid = yield* completeWith(client, id, token, { authentication_result: result })
          expect(paid.status, paid.text).toBe(200)
          expect(paid.body.status).toBe("completed")
          expect(intentsOf(fake(), id).map((pi) => pi.status)).toEqual(["canceled", "succeeded"])
          expect(succeededOf(fake(), id)).toHaveLength(1)
          expect(fake().charges().filter((c) => c.status === "succeeded" && c.metadata.checkout_session_id === id))
            .toHaveLength(1)
          // Every confirm of the paying attempt carried the authentication.
          expect(
            threeDSecureSent(id, 2).every((sent) => sent?.cryptogram === result.outcome_details.three_ds_cryptogram)
          )
            .toBe(true)
          expect(yield* orderCount).toBe(1)
        }),
        { faults: crashes.layer }
      )
    })
  }
})

describe("Stripe 3-D Secure: a settlement between the confirm and the request's step 3", () => {
  /** A `FaultInjection` running `between` once, when a request reaches `stripe.after-confirm`. */
  const makeInterleaving = () => {
    let between: Effect.Effect<void> | undefined
    return {
      once: (effect: Effect.Effect<void>) => Effect.sync(() => void (between = effect)),
      layer: Layer.succeed(FaultInjection, {
        afterRoute: () => Effect.void,
        at: (point) =>
          Effect.suspend(() => {
            const run = between
            if (point !== "stripe.after-confirm" || run === undefined) return Effect.void
            between = undefined
            return run
          })
      })
    }
  }

  it.effect("a webhook's settlement leaves it to the request: authentication_required, the result then pays", () => {
    const interleaving = makeInterleaving()
    const client = clientOf("2026-04-17")
    return runWith(
      fake(),
      Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const ready = yield* readyForStripe(client)
        const settled: Array<Settlement> = []
        yield* interleaving.once(
          Effect.map(Effect.orDie(checkout.settlePayment(ready.id)), (s) => void settled.push(s))
        )
        const answer = yield* completeWith(client, ready.id, ready.token)
        expect(settled).toEqual(["none"])
        expect(answer.status, answer.text).toBe(200)
        expect(answer.body.status).toBe("authentication_required")
        expect(intentsOf(fake(), ready.id).map((pi) => pi.status)).toEqual(["canceled"])
        const paid = yield* completeWith(client, ready.id, ready.token, { authentication_result: agentResult() })
        expect(paid.status, paid.text).toBe(200)
        expect(paid.body.status).toBe("completed")
        expect(succeededOf(fake(), ready.id)).toHaveLength(1)
        expect(yield* orderCount).toBe(1)
      }),
      { faults: interleaving.layer }
    )
  })

  it.effect("a request gone after the issuer asked: the sweep after the grace declines it, payable again", () => {
    const crashes = makePointCrashes()
    const client = clientOf("2026-04-17")
    return runWith(
      fake(),
      Effect.gen(function*() {
        const checkout = yield* CheckoutService
        const ready = yield* readyForStripe(client)
        yield* crashes.arm("stripe.after-confirm")
        expect((yield* completeWith(client, ready.id, ready.token)).status).toBe(500)
        // The provider's word alone cannot tell whether the request's agent authenticates.
        expect(yield* checkout.settlePayment(ready.id)).toBe("none")
        expect((yield* attemptOf(ready.id))?.state).toBe("pending")
        yield* TestClock.adjust(PENDING_PAYMENT_GRACE_MILLIS + 1_000)
        expect(yield* checkout.expireDue(50)).toBe(1)
        expect((yield* attemptOf(ready.id))?.state).toBe("declined")
        const read = yield* client.get(ready.id)
        expect(read.body.status).toBe("ready_for_payment")
        expect(intentsOf(fake(), ready.id).map((pi) => pi.status)).toEqual(["canceled"])
        expect(yield* orderCount).toBe(0)
        const paid = yield* completeWith(client, ready.id, fake().grantToken().id)
        expect(paid.body.status, paid.text).toBe("completed")
        expect(succeededOf(fake(), ready.id)).toHaveLength(1)
      }),
      { faults: crashes.layer }
    )
  })
})

describe("Stripe 3-D Secure with the account's import of results off (STRIPE_THREE_D_SECURE_IMPORT unset)", () => {
  const withoutImport = () => ({ config: { stripe: { ...stripeConfig(fake()).stripe!, threeDSecureImport: false } } })
  const client = clientOf("2026-04-17")

  it.effect("the handler says supports_3ds false; the issuer's requires_action is a clear 402, payable again", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const ready = yield* readyForStripe(client)
        const read = yield* client.get(ready.id)
        const handler = read.body.capabilities.payment.handlers.find((h: { id: string }) => h.id === STRIPE_HANDLER)
        expect(handler.config.supports_3ds).toBe(false)
        const declined = yield* completeWith(client, ready.id, ready.token)
        expect(declined.status).toBe(402)
        expect(declined.body).toMatchObject({ type: "processing_error", code: "payment_declined" })
        expect(declined.body.message).toMatch(/3-D Secure/)
        expect(intentsOf(fake(), ready.id).map((pi) => pi.status)).toEqual(["canceled"])
        expect((yield* client.get(ready.id)).body.status).toBe("ready_for_payment")
        expect(yield* orderCount).toBe(0)
      }),
      withoutImport()
    ))

  it.effect("an authentication_result is refused at its param, without a call to Stripe", () =>
    runWith(
      fake(),
      Effect.gen(function*() {
        const ready = yield* readyForStripe(client)
        const before = fake().requests().length
        const refused = yield* completeWith(client, ready.id, fake().grantToken().id, {
          authentication_result: agentResult()
        })
        expect(refused.status, refused.text).toBe(422)
        expect(refused.body).toMatchObject({ param: "$.authentication_result" })
        expect(refused.body.message).toMatch(/does not import 3-D Secure results/)
        expect(fake().requests().length).toBe(before)
        expect((yield* client.get(ready.id)).body.status).toBe("ready_for_payment")
      }),
      withoutImport()
    ))
})
