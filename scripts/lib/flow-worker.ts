/**
 * The full-flow agents as a process of their own (`runFlowProcess`, on the load cores when
 * pinning): argv[2] is `runFlow`'s options as JSON; prints one `RESULT {…}` line with the stats.
 */
import { runFlow } from "./flow.ts"

const stats = await runFlow(JSON.parse(process.argv[2]!))
console.log(
  `RESULT ${
    JSON.stringify({ ...stats, latencies: [...stats.latencies], checkoutLatencies: [...stats.checkoutLatencies] })
  }`
)
