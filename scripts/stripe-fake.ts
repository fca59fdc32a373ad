/**
 * `npm run stripe:fake [-- --port 12111]`: the Stripe-compatible test server of the tests
 * (`test/support/stripe/`), on its own, for `npm run demo -- --stripe` and the bench's Stripe flow
 * without an account. Prints the variables that point the service and the scripts at it.
 */
import { FakeStripe } from "../test/support/stripe/fake-stripe.ts"

const portFlag = process.argv.indexOf("--port")
const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 12111

const secretKey = process.env["STRIPE_SECRET_KEY"]
const fake = await FakeStripe.start({ port, ...(secretKey === undefined || secretKey === "" ? {} : { secretKey }) })
console.log(`Stripe-compatible test server on ${fake.url}`)
console.log("Point the service and the scripts at it:")
console.log(`  export STRIPE_API_BASE=${fake.url} STRIPE_SECRET_KEY=${fake.secretKey}`)
console.log("  export STRIPE_THREE_D_SECURE_IMPORT=true   # it imports 3-D Secure results, as an enabled account does")
console.log("Ctrl-C stops it (its state is in memory only).")
const stop = () => void fake.stop().then(() => process.exit(0))
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
