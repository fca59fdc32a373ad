/**
 * `WebhookTransport` over Node's HTTP client: one `node:http(s)` request per POST, answered when
 * the response has been read to its end (its body discarded, so the connection goes back to the
 * pool).
 *
 * - Connections are kept open between deliveries (a connection per event would cost both ends a
 *   TCP handshake and teardown). An idle one is closed after 4 s, before the 5 s after which
 *   Node servers close it by default (a receiver announcing less in `Keep-Alive: timeout=` is
 *   heeded, less a second): reusing a connection the receiver is closing fails the delivery,
 *   which is then retried.
 * - The deadline covers the whole exchange (connecting, sending, the status and the body); when
 *   it passes, or when the delivering fiber is interrupted, the request is destroyed. It is a
 *   timer of the socket's own, like the socket: no fiber races the request for it.
 * - The layer's scope closes every connection.
 */
import { Duration, Effect, Layer } from "effect"
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { type WebhookAnswer, WebhookTransport, WebhookTransportError } from "../webhook-transport.ts"

const IDLE_CONNECTION_MS = 4_000

const describe = (error: unknown): string => {
  const e = error as { code?: unknown; message?: unknown }
  const text = typeof e.code === "string" ? e.code : typeof e.message === "string" ? e.message : String(error)
  return text.slice(0, 200)
}

const firstValue = (header: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof header === "string" ? header : header?.[0]

/** How many parsed target URLs a transport keeps: a deployment posts to a few. */
const TARGETS_KEPT = 64

/**
 * The target URLs parsed once each (Node parses a string URL on every request), at most
 * `TARGETS_KEPT` of them. Throws as `new URL` does on a URL it refuses.
 */
const makeTargets = () => {
  const parsed = new Map<string, URL>()
  return (url: string): URL => {
    let target = parsed.get(url)
    if (target === undefined) {
      target = new URL(url)
      if (parsed.size >= TARGETS_KEPT) parsed.clear()
      parsed.set(url, target)
    }
    return target
  }
}

export const NodeWebhookTransport: Layer.Layer<WebhookTransport> = Layer.scoped(
  WebhookTransport,
  Effect.gen(function*() {
    const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS }
    const pool = <A extends HttpAgent>(make: () => A) =>
      Effect.acquireRelease(Effect.sync(make), (agent) => Effect.sync(() => agent.destroy()))
    const plain = yield* pool(() => new HttpAgent(options))
    const secure = yield* pool(() => new HttpsAgent(options))
    const targetOf = makeTargets()
    return WebhookTransport.of({
      post: ({ body, headers, url }, deadline) =>
        Effect.async<WebhookAnswer, WebhookTransportError>((resume) => {
          let settled = false
          let timer: ReturnType<typeof setTimeout> | undefined = undefined
          const settle = (effect: Effect.Effect<WebhookAnswer, WebhookTransportError>) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resume(effect)
          }
          const fail = (reason: string) => settle(Effect.fail(new WebhookTransportError({ reason })))
          const secureTarget = url.startsWith("https:")
          let outgoing: ReturnType<typeof httpRequest>
          try {
            outgoing = (secureTarget ? httpsRequest : httpRequest)(targetOf(url), {
              method: "POST",
              agent: secureTarget ? secure : plain,
              headers: { ...headers, "content-length": Buffer.byteLength(body) }
            }, (incoming) => {
              incoming.on("error", (error) => fail(describe(error)))
              incoming.on("end", () =>
                settle(Effect.succeed({
                  status: incoming.statusCode ?? 0,
                  retryAfter: firstValue(incoming.headers["retry-after"])
                })))
              incoming.resume()
            })
          } catch (error) {
            // An URL or header Node refuses: nothing was sent.
            fail(describe(error))
            return
          }
          timer = setTimeout(() => {
            fail(`no answer within ${Duration.format(deadline)}`)
            outgoing.destroy()
          }, Duration.toMillis(deadline))
          outgoing.on("error", (error) => fail(describe(error)))
          outgoing.end(body)
          return Effect.sync(() => {
            settled = true
            clearTimeout(timer)
            outgoing.destroy()
          })
        })
    })
  })
)
