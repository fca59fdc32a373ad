import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { WebhookHttpClient } from "../../src/app/server.ts"

/** A receiver counting the connections it accepted; answers 204 to everything. */
const countingReceiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly connections: () => number; readonly server: Server }>((resume) => {
    let connections = 0
    const server = createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(204).end())
    })
    server.on("connection", () => connections++)
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        connections: () => connections,
        server
      })))
  }),
  ({ server }) => Effect.sync(() => server.close())
)

describe("the order-event sender's HTTP client", () => {
  it.scoped("keeps the connection to the receiver open between deliveries", () =>
    Effect.gen(function*() {
      const receiver = yield* countingReceiver
      const client = yield* HttpClient.HttpClient
      for (let i = 0; i < 3; i++) {
        const response = yield* client.post(receiver.url, { body: undefined })
        expect(response.status).toBe(204)
        yield* response.text
      }
      expect(receiver.connections()).toBe(1)
    }).pipe(Effect.provide(WebhookHttpClient)))
})
