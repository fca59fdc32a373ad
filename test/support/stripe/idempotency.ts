/**
 * Idempotent requests as the reference ("Idempotent requests") describes them for API v1: the
 * status and body of the first request with a key are saved once the endpoint has begun to execute
 * and are answered again to any retry with the same key; a retry with other parameters or another
 * endpoint fails with `idempotency_error`; a key still being executed is a 409 conflict; keys are
 * pruned once at least 24 hours old, after which the key makes a new request. Keys belong to an
 * account, here the secret key the request was made with.
 */
import type { FakeClock } from "./clock.ts"
import { invalidRequest, StripeApiError } from "./errors.ts"

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000
const MAX_KEY_LENGTH = 255

export interface SavedResponse {
  readonly status: number
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  /** The `Request-Id` of the request that produced it (Stripe's `Original-Request` on replays). */
  readonly requestId: string
}

interface Entry {
  readonly endpoint: string
  readonly fingerprint: string
  readonly at: number
  response: SavedResponse | undefined
}

export type Claim =
  | { readonly kind: "new" }
  | { readonly kind: "replay"; readonly response: SavedResponse }

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly clock: FakeClock) {}

  /**
   * Claims `key` for a request to `endpoint` with parameters `fingerprint`: `new` (run it, then
   * `save` the answer) or `replay`; throws Stripe's error for a mismatch or a key in use.
   */
  claim(account: string, key: string, endpoint: string, fingerprint: string): Claim {
    if (key.length > MAX_KEY_LENGTH) {
      throw invalidRequest(`Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters long.`)
    }
    const id = `${account}\u0000${key}`
    const existing = this.entries.get(id)
    if (existing !== undefined && this.clock.now() - existing.at >= KEY_LIFETIME_MS) this.entries.delete(id)
    const entry = this.entries.get(id)
    if (entry === undefined) {
      this.entries.set(id, { endpoint, fingerprint, at: this.clock.now(), response: undefined })
      return { kind: "new" }
    }
    if (entry.endpoint !== endpoint) {
      throw idempotencyError(
        `Keys for idempotent requests can only be used for the same endpoint they were first used for ` +
          `('${entry.endpoint}'). Try using a key other than '${key}' if you meant to execute a different request.`
      )
    }
    if (entry.fingerprint !== fingerprint) {
      throw idempotencyError(
        `Keys for idempotent requests can only be used with the same parameters they were first used with. ` +
          `Try using a key other than '${key}' if you meant to execute a different request.`
      )
    }
    if (entry.response === undefined) {
      // Assumption: the reference names the 409 for concurrent use of a key; type and code are chosen.
      throw new StripeApiError(409, {
        type: "idempotency_error",
        code: "idempotency_key_in_use",
        message: `There is currently another in-progress request using this idempotency key ('${key}'). ` +
          `Try again once it has finished.`
      })
    }
    return { kind: "replay", response: entry.response }
  }

  save(account: string, key: string, response: SavedResponse): void {
    const entry = this.entries.get(`${account}\u0000${key}`)
    if (entry !== undefined) entry.response = response
  }
}

const idempotencyError = (message: string): StripeApiError =>
  new StripeApiError(400, { type: "idempotency_error", message })
