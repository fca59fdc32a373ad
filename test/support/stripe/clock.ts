/**
 * The fake's notion of time and its object ids. Every time the fake reads (object `created`,
 * idempotency-key expiry, token `expires_at`, webhook timestamps) comes from one injectable clock,
 * so a test can move time on without waiting.
 */
import { randomBytes } from "node:crypto"

export interface FakeClock {
  /** Epoch milliseconds. */
  readonly now: () => number
}

export const systemClock: FakeClock = { now: () => Date.now() }

/** A clock that stands still until the test moves it. */
export class ManualClock implements FakeClock {
  constructor(private ms: number = Date.now()) {}
  readonly now = (): number => this.ms
  advance(ms: number): void {
    this.ms += ms
  }
}

/** Unix seconds, the unit of every Stripe timestamp. */
export const unixSeconds = (clock: FakeClock): number => Math.floor(clock.now() / 1000)

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** An id shaped like Stripe's: a resource prefix, an underscore, 24 base-62 characters. */
export const newId = (prefix: string, length = 24): string => {
  let id = `${prefix}_`
  for (const byte of randomBytes(length)) id += ALPHABET[byte % ALPHABET.length]
  return id
}
