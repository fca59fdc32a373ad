/**
 * Profile servers of our own on 127.0.0.1, friendly or hostile as the test's handler decides. Every
 * connection and request is counted, so a test can show that something was never fetched.
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export type Handler = (request: IncomingMessage, response: ServerResponse) => void

export interface ProfileServer {
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly requests: ReadonlyArray<{ readonly path: string; readonly headers: IncomingMessage["headers"] }>
  /** Requests for `path` (all requests without one). */
  readonly hits: (path?: string) => number
  readonly connections: () => number
}

export const profileServer = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.async<{ server: ReturnType<typeof createServer>; state: ProfileServer }>((resume) => {
      const requests: Array<{ path: string; headers: IncomingMessage["headers"] }> = []
      let connections = 0
      const server = createServer((request, response) => {
        requests.push({ path: request.url ?? "", headers: request.headers })
        handler(request, response)
      })
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          server,
          state: {
            port,
            origin: `http://127.0.0.1:${port}`,
            requests,
            hits: (path) => requests.filter((r) => path === undefined || r.path === path).length,
            connections: () => connections
          }
        }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))

/** Answers JSON with the given headers (a `Cache-Control` of five minutes unless told otherwise). */
export const json = (body: unknown, headers: Record<string, string> = {}, status = 200): Handler => (_, response) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "cache-control": "public, max-age=300",
    "content-length": Buffer.byteLength(text),
    ...headers
  })
  response.end(text)
}

/** Waits in real time (the test clock does not move by itself) until `done` holds. */
export const eventually = (done: () => boolean, timeoutMs = 5_000) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now()
      const poll = () => {
        if (done()) return resolve()
        if (Date.now() - started > timeoutMs) return reject(new Error("condition not met in time"))
        setTimeout(poll, 5)
      }
      poll()
    })
  )
