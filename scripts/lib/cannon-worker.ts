/**
 * autocannon as a process of its own (`load.ts` runs it when wrk is not installed): argv[2] is the
 * `LoadOptions` as JSON; prints one `RESULT {…}` line with the `LoadResult` fields.
 */
import autocannon from "autocannon"
import type { LoadOptions } from "./load.ts"

const options = JSON.parse(process.argv[2]!) as LoadOptions
let i = 0
const paths = options.paths
autocannon(
  {
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
    ...(options.method !== undefined ? { method: options.method } : {}),
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.headers !== undefined ? { headers: options.headers } : {}),
    ...(paths !== undefined || options.uniqueHeader !== undefined
      ? {
        requests: [{
          setupRequest: (request) => {
            const n = i++
            return {
              ...request,
              ...(paths === undefined ? {} : { path: paths[n % paths.length]! }),
              ...(options.uniqueHeader === undefined
                ? {}
                : { headers: { ...request.headers, [options.uniqueHeader]: `${process.pid}-${n}` } })
            }
          }
        }]
      }
      : {})
  },
  (error, result) => {
    if (error) throw error
    const unexpected = Object.entries(result.statusCodeStats)
      .filter(([status]) => Number(status) !== options.expected)
      .reduce((sum, [, stat]) => sum + Number(stat.count), 0)
    console.log(`RESULT ${
      JSON.stringify({
        requests: result.requests.total,
        durationSeconds: result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: unexpected + result.errors
      })
    }`)
  }
)
