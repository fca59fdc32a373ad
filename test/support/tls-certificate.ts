/** A self-signed certificate for TLS tests, made by `openssl` (`hasOpenssl` says whether it can be). */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { tempDirectory } from "./test-database.ts"

export const hasOpenssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** A self-signed P-256 certificate for localhost, valid one day. */
export const selfSignedCertificate = Effect.gen(function*() {
  const dir = yield* tempDirectory("acp-tls-")
  const certFile = join(dir, "cert.pem")
  const keyFile = join(dir, "key.pem")
  execFileSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-days",
    "1",
    "-keyout",
    keyFile,
    "-out",
    certFile
  ], { stdio: "ignore" })
  return { certFile, keyFile, cert: readFileSync(certFile) }
})
