/**
 * Request bodies as the Node server receives them (`src/platform/http/request-body-bytes.ts`):
 * the whole application served on a port (`HttpServerLive`), requests sent with `node:http` and
 * raw sockets, so that bodies arrive after the route started, in pieces, chunked, too large or
 * never complete. Every reader of a request (signature check, idempotency middleware, route) gets
 * the same bytes from the one read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { HttpServerLive } from "../../src/app/server.ts"
import { MAX_BODY_BYTES } from "../../src/platform/http/request-body-bytes.ts"
import { signRequest } from "../../src/shared/request-signing.ts"
import { address, API_KEY, buyer, testApp } from "../support/http.ts"
import { freePort } from "../support/server-process.ts"

const SECRET = "node_body_secret"
const createBody = JSON.stringify({ items: [{ id: "mug-ceramic", quantity: 1 }], buyer, fulfillment_address: address })

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: any
}

/**
 * Sends `parts` of a body one after the other, `pauseMillis` apart: with a `content-length`
 * header as given, chunked without one.
 */
const send = (
  port: number,
  path: string,
  parts: ReadonlyArray<string | Buffer>,
  options: { readonly headers?: Record<string, string>; readonly pauseMillis?: number; readonly method?: string } = {}
) =>
  Effect.promise(() =>
    new Promise<Answer>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: "127.0.0.1",
          port,
          path,
          method: options.method ?? "POST",
          headers: {
            authorization: `Bearer ${API_KEY}`,
            "api-version": "2025-09-29",
            "content-type": "application/json",
            ...options.headers
          }
        },
        (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (text += chunk))
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: text === "" ? undefined : JSON.parse(text)
            }))
        }
      )
      outgoing.on("error", reject)
      void (async () => {
        for (const [index, part] of parts.entries()) {
          if (index > 0 && options.pauseMillis !== undefined) {
            await new Promise((wake) => setTimeout(wake, options.pauseMillis))
          }
          outgoing.write(part)
        }
        outgoing.end()
      })()
    })
  )

const lengthOf = (body: string) => ({ "content-length": String(Buffer.byteLength(body)) })

/** The application on a free port for the test's scope. */
const serve = (config: Parameters<typeof testApp>[0] = {}) =>
  Effect.gen(function*() {
    const port = yield* freePort
    yield* Layer.build(
      HttpServerLive.pipe(
        Layer.provide(testApp({ ...config, config: { ...config.config, port, host: "127.0.0.1" } }))
      )
    )
    return port
  })

describe("request bodies on the Node server", () => {
  it.scopedLive("a body sent in pieces after the route started, and a chunked one, are read whole", () =>
    Effect.gen(function*() {
      const port = yield* serve()
      const cut = 40
      const slow = yield* send(port, "/checkout_sessions", [createBody.slice(0, cut), createBody.slice(cut)], {
        headers: lengthOf(createBody),
        pauseMillis: 50
      })
      expect(slow.status).toBe(201)
      expect(slow.body.line_items[0].item).toEqual({ id: "mug-ceramic", quantity: 1 })
      expect(slow.body.fulfillment_address).toEqual(address)

      const chunked = yield* send(port, "/checkout_sessions", [createBody.slice(0, cut), createBody.slice(cut)], {
        pauseMillis: 20
      })
      expect(chunked.status).toBe(201)
      expect(chunked.body.buyer).toEqual(buyer)

      // Multi-byte characters split between two pieces are decoded whole.
      const named = JSON.stringify({ ...JSON.parse(createBody), buyer: { ...buyer, first_name: "Zoë Ⅻ" } })
      const splitAt = Buffer.from(named).indexOf(Buffer.from("Ⅻ")) + 1
      const bytes = Buffer.from(named)
      const split = yield* send(port, "/checkout_sessions", [bytes.subarray(0, splitAt), bytes.subarray(splitAt)], {
        headers: lengthOf(named),
        pauseMillis: 20
      })
      expect(split.status).toBe(201)
      expect(split.body.buyer.first_name).toBe("Zoë Ⅻ")
    }))

  it.scopedLive("the idempotency middleware and the route read the same body: a retry is answered from the store", () =>
    Effect.gen(function*() {
      const port = yield* serve()
      const keyed = { ...lengthOf(createBody), "idempotency-key": "node-body-key-1" }
      const first = yield* send(port, "/checkout_sessions", [createBody.slice(0, 10), createBody.slice(10)], {
        headers: keyed,
        pauseMillis: 30
      })
      expect(first.status).toBe(201)
      const retry = yield* send(port, "/checkout_sessions", [createBody], { headers: keyed })
      expect(retry.status).toBe(201)
      expect(retry.body.id).toBe(first.body.id)
      expect(retry.headers["idempotent-replayed"]).toBe("true")

      const changed = createBody.replace("\"quantity\":1", "\"quantity\":2")
      const conflict = yield* send(port, "/checkout_sessions", [changed], {
        headers: { ...lengthOf(changed), "idempotency-key": "node-body-key-1" }
      })
      expect(conflict.status).toBe(409)
      expect(conflict.body.code).toBe("idempotency_conflict")
    }))

  it.scopedLive("the signature check and the route read the same body", () =>
    Effect.gen(function*() {
      const port = yield* serve({ config: { requestSigningSecrets: [Redacted.make(SECRET)] } })
      const timestamp = String(Math.floor(Date.now() / 1000))
      const signed = {
        ...lengthOf(createBody),
        timestamp,
        signature: signRequest(SECRET, timestamp, createBody)
      }
      const ok = yield* send(port, "/checkout_sessions", [createBody.slice(0, 25), createBody.slice(25)], {
        headers: signed,
        pauseMillis: 30
      })
      expect(ok.status).toBe(201)

      const tampered = createBody.replace("mug-ceramic", "tshirt-classic")
      const refused = yield* send(port, "/checkout_sessions", [tampered], {
        headers: { ...signed, ...lengthOf(tampered) }
      })
      expect(refused.status).toBe(401)
      expect(refused.body.code).toBe("invalid_signature")
    }))

  it.scopedLive("an empty body and a malformed one are answered 400 invalid_json", () =>
    Effect.gen(function*() {
      const port = yield* serve()
      const empty = yield* send(port, "/checkout_sessions", [], { headers: { "content-length": "0" } })
      expect(empty.status).toBe(400)
      expect(empty.body.code).toBe("invalid_json")
      const malformed = yield* send(port, "/checkout_sessions", ["{\"items\":", "[}"], { pauseMillis: 20 })
      expect(malformed.status).toBe(400)
      expect(malformed.body.code).toBe("invalid_json")
    }))

  it.scopedLive("a chunked body over the limit is answered 413 and the server keeps serving", () =>
    Effect.gen(function*() {
      const port = yield* serve()
      const piece = Buffer.alloc(64 * 1024, " ")
      const pieces = Array.from({ length: Math.ceil(MAX_BODY_BYTES / piece.length) + 2 }, () => piece)
      const tooLarge = yield* send(port, "/checkout_sessions", [Buffer.from("{\"items\":"), ...pieces])
      expect(tooLarge.status).toBe(413)
      expect(tooLarge.body.code).toBe("request_too_large")

      const next = yield* send(port, "/checkout_sessions", [createBody], { headers: lengthOf(createBody) })
      expect(next.status).toBe(201)
    }))

  it.scopedLive("a client that goes away mid-body leaves the server serving", () =>
    Effect.gen(function*() {
      const port = yield* serve()
      yield* Effect.promise(() =>
        new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write(
              "POST /checkout_sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                `Authorization: Bearer ${API_KEY}\r\nAPI-Version: 2025-09-29\r\n` +
                "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\":"
            )
            setTimeout(() => {
              socket.destroy()
              resolve()
            }, 50)
          })
        })
      )
      const next = yield* send(port, "/checkout_sessions", [createBody], { headers: lengthOf(createBody) })
      expect(next.status).toBe(201)
    }))
})
