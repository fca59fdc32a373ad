/**
 * HTTPS when TLS_CERT_FILE/TLS_KEY_FILE are set: TLS 1.3 only. The real server layer
 * (`HttpServerLive`) on a port, with a self-signed certificate made by `openssl` for the test
 * (skipped, saying so, when openssl is not installed).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { get as httpsGet } from "node:https"
import { join } from "node:path"
import { connect as tlsConnect, type TLSSocket } from "node:tls"
import { HttpServerLive, TlsConfigError } from "../../src/app/server.ts"
import { testApp } from "../support/http.ts"
import { freePort } from "../support/server-process.ts"
import { tempDirectory } from "../support/test-database.ts"
import { hasOpenssl, selfSignedCertificate } from "../support/tls-certificate.ts"

const serveTls = (tls: { certFile: string; keyFile: string }, port: number) =>
  Layer.build(
    HttpServerLive.pipe(
      Layer.provide(testApp({ config: { tls: Option.some(tls), port, host: "127.0.0.1" } }))
    )
  )

describe.skipIf(!hasOpenssl)("HTTPS (openssl available to make a certificate)", () => {
  it.live("a TLS 1.3 client gets /healthz; a TLS 1.2-only client is refused", () =>
    Effect.gen(function*() {
      const { cert, certFile, keyFile } = yield* selfSignedCertificate
      const port = yield* freePort
      yield* serveTls({ certFile, keyFile }, port)

      const modern = yield* Effect.promise(() =>
        new Promise<{ status: number; body: string; protocol: string }>((resolve, reject) => {
          const req = httpsGet(
            { host: "127.0.0.1", port, path: "/healthz", ca: cert, servername: "localhost" },
            (res) => {
              let body = ""
              const protocol = (res.socket as TLSSocket).getProtocol() ?? ""
              res.setEncoding("utf8")
              res.on("data", (chunk: string) => (body += chunk))
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body, protocol }))
            }
          )
          req.on("error", reject)
        })
      )
      expect(modern.status).toBe(200)
      expect(JSON.parse(modern.body)).toEqual({ status: "ok" })
      expect(modern.protocol).toBe("TLSv1.3")

      const legacy = yield* Effect.promise(() =>
        new Promise<{ connected: boolean; error?: string }>((resolve) => {
          const socket = tlsConnect({
            host: "127.0.0.1",
            port,
            ca: cert,
            servername: "localhost",
            maxVersion: "TLSv1.2"
          })
          socket.once("secureConnect", () => {
            socket.destroy()
            resolve({ connected: true })
          })
          socket.once(
            "error",
            (error: NodeJS.ErrnoException) => resolve({ connected: false, error: error.code ?? error.message })
          )
        })
      )
      expect(legacy.connected).toBe(false)
      expect(legacy.error).toMatch(/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|VERSION/)

      // Plain HTTP on the TLS port gets no HTTP answer.
      const plain = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => "failed" as const)
      )
      expect(plain).not.toBe(200)
    }).pipe(Effect.scoped), 60_000)
})

describe("TLS files", () => {
  it.live("an unreadable certificate or key stops the server layer, naming the variable", () =>
    Effect.gen(function*() {
      const dir = yield* tempDirectory("acp-tls-")
      const port = yield* freePort
      const missing = yield* Effect.flip(
        serveTls({ certFile: join(dir, "nope.pem"), keyFile: join(dir, "key.pem") }, port)
      )
      expect(missing).toBeInstanceOf(TlsConfigError)
      expect(missing.message).toContain("TLS_CERT_FILE")
      expect(missing.message).toContain("ENOENT")
    }).pipe(Effect.scoped))
})
