/**
 * A Feed API of our own that fails on cue, on a port: each request takes the next scripted answer
 * (the last one repeats), and every request is kept for the test to inspect. An answer may hang,
 * for the client's deadline.
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

export interface ScriptedAnswer {
  readonly status: number
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Never answer (the connection stays open until the server closes). */
  readonly hang?: boolean
}

export interface ReceivedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: unknown
}

export interface ScriptedFeedServer {
  readonly baseUrl: string
  readonly received: ReadonlyArray<ReceivedRequest>
}

/** The server for the scope; `answers` are given out in order. */
export const scriptedFeedServer = (answers: ReadonlyArray<ScriptedAnswer>) =>
  Effect.acquireRelease(
    Effect.async<{ server: ReturnType<typeof createServer>; state: ScriptedFeedServer }>((resume) => {
      const received: Array<ReceivedRequest> = []
      const server = createServer((incoming, outgoing) => {
        const chunks: Array<Buffer> = []
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
        incoming.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          received.push({
            method: incoming.method ?? "",
            url: incoming.url ?? "",
            headers: incoming.headers,
            body: text === "" ? undefined : JSON.parse(text)
          })
          const answer = answers[Math.min(received.length, answers.length) - 1]!
          if (answer.hang === true) return
          const body = answer.body === undefined ? "" : typeof answer.body === "string"
            ? answer.body
            : JSON.stringify(answer.body)
          outgoing.writeHead(answer.status, {
            "content-type": typeof answer.body === "string" ? "text/html" : "application/json",
            ...answer.headers
          })
          outgoing.end(body)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, state: { baseUrl: `http://127.0.0.1:${port}`, received } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))
