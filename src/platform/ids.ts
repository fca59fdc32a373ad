/** Prefixed opaque ids (`cs_`, `ord_`, …): 22 base62 characters drawn uniformly from the OS (≈ 131 bits). */
import { Context, Effect, Layer } from "effect"
import { randomFillSync } from "node:crypto"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const ID_LENGTH = 22
/** Bytes at or above this are skipped, so that `byte % 62` is uniform (248 = 4 × 62). */
const UNBIASED_LIMIT = 248

// Random bytes drawn 4 KiB at a time: one call into the OS per ~180 ids.
const pool = Buffer.alloc(4096)
let position = pool.length

const randomByte = (): number => {
  if (position === pool.length) {
    randomFillSync(pool)
    position = 0
  }
  return pool[position++]!
}

export const randomId = (prefix: string): string => {
  let out = prefix
  for (let i = 0; i < ID_LENGTH;) {
    const byte = randomByte()
    if (byte < UNBIASED_LIMIT) {
      out += alphabet[byte % 62]
      i++
    }
  }
  return out
}

export interface IdsService {
  /** A new id with `prefix`; without one, a bare random token (an order's permalink). */
  readonly make: (
    prefix: "cs_" | "chk_" | "ord_" | "vt_" | "evt_" | "ch_" | "req_" | "li_" | "authn_" | "cart_" | ""
  ) => Effect.Effect<string>
}

export class Ids extends Context.Tag("acp/Ids")<Ids, IdsService>() {
  static readonly Live = Layer.succeed(Ids, { make: (prefix) => Effect.sync(() => randomId(prefix)) })
}
