/**
 * Prefixed opaque identifiers (`cs_`, `ord_`, `vt_`, `evt_`, …): 128 random bits, base62.
 */
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** 22 base62 characters from 16 random bytes. */
export const randomId = (prefix: string): string => {
  let n = BigInt("0x" + randomBytes(16).toString("hex"))
  let out = ""
  for (let i = 0; i < 22; i++) {
    out = alphabet[Number(n % 62n)] + out
    n /= 62n
  }
  return prefix + out
}

export interface IdsService {
  readonly make: (prefix: "cs_" | "ord_" | "vt_" | "evt_" | "ch_" | "req_" | "li_") => Effect.Effect<string>
}

export class Ids extends Context.Tag("acp/Ids")<Ids, IdsService>() {
  static readonly Live = Layer.succeed(Ids, { make: (prefix) => Effect.sync(() => randomId(prefix)) })
}
