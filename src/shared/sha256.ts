/** SHA-256 of a UTF-8 string, computed on every request: the one-shot `crypto.hash` where Node has it (20.12+). */
import * as crypto from "node:crypto"

export const sha256: (text: string) => Buffer = typeof crypto.hash === "function"
  ? (text) => crypto.hash("sha256", text, "buffer")
  : (text) => crypto.createHash("sha256").update(text, "utf8").digest()
