/**
 * The merchant's catalog as an ACP 2026-04-17 product feed, through the running server's merchant
 * routes (BASE_URL, MERCHANT_API_KEY or DATA_DIR/secrets.json, as the other scripts):
 * - `npm run feed:push`: pushes every product to the agent's Feed API (`FEED_API_URL` of the server)
 *   now, and prints what was sent and what waits or is dead-lettered;
 * - `npm run feed:export [-- <directory>]`: writes the file form, `metadata.json` and `products.jsonl`
 *   (one `Product` a line), to `<directory>` (default `./feed`).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { clientOptionsFromEnv, makeCall } from "./lib/acp-client.ts"

const [command, directory = "feed"] = process.argv.slice(2)
const options = clientOptionsFromEnv()
const call = makeCall({ baseUrl: options.baseUrl, apiKey: options.merchantApiKey })

const fail = (what: string, answer: { status: number; body: any }): never => {
  console.error(`${what}: ${answer.status} ${answer.body?.message ?? JSON.stringify(answer.body)}`)
  process.exit(1)
}

if (command === "push") {
  const pushed = await call("POST", "/feed-publication/push")
  if (pushed.status !== 200) fail("feed push", pushed)
  const { deferred, failed, feed_id, sent, unchanged } = pushed.body
  console.log(`feed ${feed_id}: ${sent} products sent, ${unchanged} unchanged, ${deferred} deferred, ${failed} failed`)
  const status = await call("GET", "/feed-publication")
  if (status.status !== 200) fail("feed status", status)
  for (const dead of status.body.dead) console.log(`  dead: ${dead.product_id} (${dead.last_error ?? "no answer"})`)
  for (const pending of status.body.pending) {
    console.log(`  waiting: ${pending.product_id}${pending.last_error === undefined ? "" : ` (${pending.last_error})`}`)
  }
  process.exit(failed > 0 ? 1 : 0)
} else if (command === "export") {
  const file = await call("GET", "/feed-publication/products")
  if (file.status !== 200) fail("feed export", file)
  const target = resolve(directory)
  mkdirSync(target, { recursive: true })
  writeFileSync(join(target, "metadata.json"), JSON.stringify(file.body.metadata, null, 2) + "\n")
  writeFileSync(
    join(target, "products.jsonl"),
    file.body.products.map((product: unknown) => JSON.stringify(product) + "\n").join("")
  )
  console.log(`${file.body.products.length} products written to ${target} (metadata.json, products.jsonl)`)
  for (const invalid of file.body.invalid) console.log(`  left out: ${invalid.product_id}: ${invalid.reason}`)
} else {
  console.error("usage: tsx scripts/feed.ts push | export [directory]")
  process.exit(2)
}
