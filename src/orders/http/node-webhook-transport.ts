/**
 * `WebhookTransport` over Node's HTTP client, connections kept open between deliveries. An idle one closes
 * after 4 s, before Node servers' default 5 s (a shorter `Keep-Alive: timeout=` is heeded, less a second):
 * reusing a connection the receiver is closing fails the delivery. The deadline covers the whole exchange.
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

/** Parsed target URLs kept: a deployment posts to a few. */
const TARGETS_KEPT = 64

/** Target URLs parsed once each (Node parses a string URL on every request); throws as `new URL` does. */
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
            // A URL or header Node refuses: nothing was sent.
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
