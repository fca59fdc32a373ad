/** 1–255 printable ASCII characters, no space (CONTRACT §6), so that a key is always safe to echo. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

export const isValidIdempotencyKey = (value: string): boolean => IDEMPOTENCY_KEY_PATTERN.test(value)
