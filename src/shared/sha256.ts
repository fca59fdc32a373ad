/**
 * SHA-256 of a UTF-8 string, for the hashes computed on every request (the bearer token, line
 * item ids). The one-shot `crypto.hash` (Node 20.12 and later) costs about half of a `Hash`
 * object's create, update and digest; older Node 20 releases get the `Hash` object.
 */
import * as crypto from "node:crypto"

export const sha256: (text: string) => Buffer = typeof crypto.hash === "function"
  ? (text) => crypto.hash("sha256", text, "buffer")
  : (text) => crypto.createHash("sha256").update(text, "utf8").digest()
