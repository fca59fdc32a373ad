/**
 * A scripted agent: drives a running server through create → update → tokenize → complete,
 * reads the order and the order events the platform received, and create → cancel, printing
 * each step. Usage: `npm run agent` (server on BASE_URL, default
 * http://localhost:8080; the agent key from API_KEY and the merchant key, which reads the order, from
 * MERCHANT_API_KEY, each else from DATA_DIR/secrets.json).
 */
import {
  address,
  buyer,
  clientOptionsFromEnv,
  makeCall,
  money,
  paymentBody,
  type Session,
  tokenizeBody,
  totalOf
} from "./lib/acp-client.ts"

const options = clientOptionsFromEnv()
const baseUrl = options.baseUrl
const call = makeCall(options)
/** The order routes are the merchant's: an agent key gets 403 there. */
const merchantCall = makeCall({ ...options, apiKey: options.merchantApiKey })
const total = (session: Session) => money(totalOf(session))

const expectStatus = (step: string, result: { status: number; body: unknown }, status: number) => {
  if (result.status !== status) {
    console.error(`${step}: expected ${status}, got ${result.status}: ${JSON.stringify(result.body)}`)
    process.exit(1)
  }
}

const main = async () => {
  console.log(`Agent → ${baseUrl}`)
  const created = await call("POST", "/checkout_sessions", { items: [{ id: "tshirt-classic", quantity: 2 }] })
  expectStatus("create", created, 201)
  let session = created.body as Session
  console.log(`1. created ${session.id}: ${session.status}, total ${total(session)}`)
  for (const message of session.messages) console.log(`   - ${message.content}`)

  const updated = await call("POST", `/checkout_sessions/${session.id}`, {
    buyer,
    fulfillment_address: address,
    items: [{ id: "tshirt-classic", quantity: 1 }, { id: "mug-ceramic", quantity: 2 }]
  })
  expectStatus("update", updated, 200)
  session = updated.body as Session
  console.log(
    `2. updated: ${session.status}, options ${
      session.fulfillment_options.map((o) => `${o.id} ${money(o.total)}`).join(", ")
    }`
  )

  const express = await call("POST", `/checkout_sessions/${session.id}`, { fulfillment_option_id: "express" })
  expectStatus("select option", express, 200)
  session = express.body as Session
  console.log(`3. selected ${session.fulfillment_option_id}: total ${total(session)}`)

  const amount = session.totals.find((t) => t.type === "total")?.amount ?? 0
  const tokenized = await call(
    "POST",
    "/agentic_commerce/delegate_payment",
    tokenizeBody(session.id, amount, "scripts/agent.ts")
  )
  expectStatus("tokenize", tokenized, 201)
  console.log(`4. tokenized the card: ${tokenized.body.id} (allowance ${money(amount)})`)

  const completed = await call("POST", `/checkout_sessions/${session.id}/complete`, paymentBody(tokenized.body.id))
  expectStatus("complete", completed, 200)
  session = completed.body as Session
  console.log(`5. completed: order ${session.order?.id} (${session.order?.permalink_url})`)

  const order = await merchantCall("GET", `/orders/${session.order?.id}`)
  expectStatus("read order", order, 200)
  console.log(`6. order ${order.body.id}: ${order.body.status}, ${order.body.line_items.length} lines`)
  for (let i = 0; i < 50; i++) {
    const received = await call("GET", `/agentic_checkout/orders/${session.order?.id}`)
    if (received.status === 200) {
      console.log(
        `7. the platform received the signed order_create event: status ${
          received.body.order?.status ?? received.body.status
        }`
      )
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  const again = await call("POST", `/checkout_sessions/${session.id}/complete`, {
    payment_data: { token: "tok_visa", provider: "acp_vault" }
  })
  console.log(`8. completing again → ${again.status} ${again.body.code}`)

  const other = await call("POST", "/checkout_sessions", { items: [{ id: "ebook-field-guide", quantity: 1 }] })
  expectStatus("create", other, 201)
  const canceled = await call("POST", `/checkout_sessions/${other.body.id}/cancel`)
  expectStatus("cancel", canceled, 200)
  console.log(`9. created ${other.body.id} and canceled it: ${canceled.body.status}`)
  const cancelAgain = await call("POST", `/checkout_sessions/${other.body.id}/cancel`)
  console.log(`10. canceling again → ${cancelAgain.status} ${cancelAgain.body.code}`)
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
