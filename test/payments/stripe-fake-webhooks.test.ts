/**
 * The fake Stripe's webhooks against the reference ("Webhooks", "Verify webhook signatures", "The
 * Event object"): events for payments, refunds and disputes arrive signed so that the SDK's
 * `webhooks.constructEvent` accepts them with the endpoint's secret; a replayed event keeps its id;
 * a stale or badly signed one is refused by the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import Stripe from "stripe"
import type { WebhookEndpoint } from "../support/stripe/webhooks.ts"
import { payWith, sdk, useFake } from "./stripe-fake-fixtures.ts"

const fake = useFake()

interface Received {
  readonly url: string
  readonly body: string
  readonly signature: string
  readonly contentType: string
}

const received: Array<Received> = []
const receiver = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    received.push({
      url: req.url ?? "",
      body: Buffer.concat(chunks).toString("utf8"),
      signature: String(req.headers["stripe-signature"]),
      contentType: String(req.headers["content-type"])
    })
    res.writeHead(200).end()
  })
})
let endpoint: WebhookEndpoint
let failuresOnly: WebhookEndpoint

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`
  endpoint = fake().addWebhookEndpoint({ url })
  failuresOnly = fake().addWebhookEndpoint({ url: `${url}?failures`, events: ["payment_intent.payment_failed"] })
})
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

const verifier = new Stripe("sk_test_verifier_unused")
const verify = (delivery: Received, secret = endpoint.secret) =>
  verifier.webhooks.constructEvent(delivery.body, delivery.signature, secret)

/** The events `endpoint` received about `objectId` (a PaymentIntent, or an object of one). */
const eventsFor = async (objectId: string) => {
  await fake().webhooksDelivered()
  return received
    .filter((delivery) => delivery.url === "/webhooks")
    .map((delivery) => ({
      delivery,
      event: verifier.webhooks.constructEventWithoutVerification(delivery.body) as Stripe.Event
    }))
    .filter(({ event }) =>
      (event.data.object as { id?: string }).id === objectId || (event.data.object as any).payment_intent === objectId
    )
}

describe("fake Stripe: webhooks", () => {
  it("a successful payment sends payment_intent.succeeded, signed so constructEvent accepts it", async () => {
    const intent = await sdk(fake()).paymentIntents.create(payWith(fake().grantToken().id, 1900))
    const events = await eventsFor(intent.id)
    const types = events.map(({ event }) => event.type)
    expect(types).toEqual(
      expect.arrayContaining(["payment_intent.created", "charge.succeeded", "payment_intent.succeeded"])
    )
    const succeeded = events.find(({ event }) => event.type === "payment_intent.succeeded")!
    const event = verify(succeeded.delivery)
    expect(event.id).toMatch(/^evt_/)
    expect(event).toMatchObject({
      object: "event",
      type: "payment_intent.succeeded",
      api_version: fake().apiVersion,
      livemode: false,
      data: { object: { id: intent.id, object: "payment_intent", status: "succeeded", amount: 1900 } }
    })
    expect(event.created).toBeTypeOf("number")
    expect(succeeded.delivery.contentType).toContain("application/json")
    expect(succeeded.delivery.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(await sdk(fake()).events.retrieve(event.id)).toMatchObject({ id: event.id, type: event.type })
  })

  it("declines, processing and settlement send payment_failed and processing; endpoints get only their types", async () => {
    const stripe = sdk(fake())
    const declined = await stripe.paymentIntents
      .create(payWith(fake().grantToken({ behavior: "declines" }).id, 1000))
      .catch((error) => error.payment_intent as Stripe.PaymentIntent)
    const slow = await stripe.paymentIntents.create(payWith(fake().grantToken({ behavior: "processing" }).id, 1000))
    fake().settleProcessing(slow.id, "succeeded")
    expect((await eventsFor(declined.id)).map(({ event }) => event.type)).toContain("payment_intent.payment_failed")
    expect((await eventsFor(slow.id)).map(({ event }) => event.type)).toEqual(
      expect.arrayContaining(["payment_intent.processing", "payment_intent.succeeded"])
    )
    const toFailuresOnly = fake().deliveries().filter((d) => d.endpointId === failuresOnly.id)
    expect(new Set(toFailuresOnly.map((d) => d.type))).toEqual(new Set(["payment_intent.payment_failed"]))
    expect(toFailuresOnly.every((d) => d.status === 200)).toBe(true)
  })

  it("refunds send charge.refunded; disputes send charge.dispute.created and charge.dispute.closed", async () => {
    const stripe = sdk(fake())
    const intent = await stripe.paymentIntents.create(payWith(fake().grantToken().id, 2400))
    await stripe.refunds.create({ payment_intent: intent.id, amount: 400 })
    const dispute = fake().openDispute(intent.id)
    fake().closeDispute(dispute.id, "lost")
    const events = (await eventsFor(intent.id)).map(({ delivery }) => verify(delivery))
    const refunded = events.find((event) => event.type === "charge.refunded")!
    expect(refunded.data.object).toMatchObject({ object: "charge", amount_refunded: 400, refunded: false })
    expect(events.find((event) => event.type === "charge.dispute.created")!.data.object).toMatchObject({
      id: dispute.id,
      status: "needs_response"
    })
    expect(events.find((event) => event.type === "charge.dispute.closed")!.data.object).toMatchObject({
      id: dispute.id,
      status: "lost"
    })
  })

  it("a replayed event arrives again with the same id; a stale or badly signed one is refused by constructEvent", async () => {
    const intent = await sdk(fake()).paymentIntents.create(payWith(fake().grantToken().id, 1100))
    await fake().webhooksDelivered()
    const original = fake().events("payment_intent.succeeded").find((event) =>
      (event.data.object as any).id === intent.id
    )!

    const [replay] = await fake().resendEvent(original.id, { endpointId: endpoint.id })
    expect(replay!.status).toBe(200)
    const copies = (await eventsFor(intent.id)).filter(({ event }) => event.id === original.id)
    expect(copies).toHaveLength(2)
    expect(copies.map(({ delivery }) => verify(delivery).id)).toEqual([original.id, original.id])

    const [stale] = await fake().resendEvent(original.id, { endpointId: endpoint.id, stale: true })
    expect(() => verifier.webhooks.constructEvent(stale!.payload, stale!.signature, endpoint.secret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError
    )
    expect(() => verifier.webhooks.constructEvent(stale!.payload, stale!.signature, endpoint.secret)).toThrow(
      /tolerance/
    )
    const [bad] = await fake().resendEvent(original.id, { endpointId: endpoint.id, signature: "bad" })
    expect(() => verifier.webhooks.constructEvent(bad!.payload, bad!.signature, endpoint.secret)).toThrow(
      /No signatures found/
    )
    // The signature covers the exact bytes: a re-serialized body fails too.
    const [valid] = await fake().resendEvent(original.id, { endpointId: endpoint.id })
    expect(() =>
      verifier.webhooks.constructEvent(JSON.stringify(JSON.parse(valid!.payload)), valid!.signature, endpoint.secret)
    )
      .toThrow(Stripe.errors.StripeSignatureVerificationError)
  })
})
