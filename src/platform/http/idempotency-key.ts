/**
 * The `Idempotency-Key` request header (CONTRACT §6): its format. The request middleware echoes a valid key on every response; the idempotency middleware
 * claims it.
 */

/** 1–255 printable ASCII characters (space excluded), so a key is always safe to echo in a header. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

export const isValidIdempotencyKey = (value: string): boolean => IDEMPOTENCY_KEY_PATTERN.test(value)
