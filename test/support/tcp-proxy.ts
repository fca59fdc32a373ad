/**
 * A TCP proxy the test controls, between the application's pool and PostgreSQL: `pause()` cuts
 * every open connection and refuses new ones (the database "goes away"), `resume()` accepts again
 * on the same port. Closed when the scope closes.
 */
import { Effect } from "effect"
import { createConnection, createServer, type Server, type Socket } from "node:net"

export interface TcpProxy {
  readonly port: number
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
}

const listen = (server: Server, port: number) =>
  Effect.async<number>((resume) => {
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : port))
    })
  })

const close = (server: Server) =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    server.close(() => resume(Effect.void))
  })

export const tcpProxy = (target: { readonly host: string; readonly port: number }) =>
  Effect.gen(function*() {
    const sockets = new Set<Socket>()
    const server = createServer((client) => {
      const upstream = createConnection(target.port, target.host)
      sockets.add(client)
      sockets.add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    const cutAll = Effect.sync(() => {
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    })
    const port = yield* Effect.acquireRelease(listen(server, 0), () => Effect.zipRight(cutAll, close(server)))
    return {
      port,
      pause: Effect.zipRight(cutAll, close(server)),
      resume: Effect.asVoid(listen(server, port))
    } satisfies TcpProxy
  })
