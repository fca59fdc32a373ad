/**
 * The token bucket of `src/rate-limit/model/token-bucket.ts` in one statement, shared by every process:
 * `rate_limit_take_up_to` refills to `p_now`, takes up to `p_count` whole tokens (0 only looks; a denied
 * take writes nothing) and returns the tokens before taking, by the model's arithmetic
 * (`test/rate-limit/rate-limit-take.test.ts`). `full_at` is the largest bigint for never full.
 * `rate_limit_take` keeps the previous release's signature working during a deployment.
 */
import type { SqlFunction } from "./sql-function.ts"

export const rateLimitTakeUpTo: SqlFunction = {
  name: "rate_limit_take_up_to",
  version: 1,
  definition: `
  CREATE OR REPLACE FUNCTION rate_limit_take_up_to(
    p_key text, p_capacity double precision, p_per_ms double precision, p_now bigint, p_count integer
  ) RETURNS double precision
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_tokens double precision;
    v_updated bigint;
    v_left double precision;
    v_full_at bigint := 9223372036854775807;
  BEGIN
    IF p_count > 0 THEN
      -- Create it if absent (a concurrent creator waits here), so there is a row to lock.
      INSERT INTO rate_limit_buckets (bucket_key, tokens, updated_at, full_at)
      VALUES (p_key, p_capacity, p_now, p_now)
      ON CONFLICT (bucket_key) DO NOTHING;
      SELECT b.tokens, b.updated_at INTO v_tokens, v_updated
      FROM rate_limit_buckets b WHERE b.bucket_key = p_key FOR UPDATE;
    ELSE
      SELECT b.tokens, b.updated_at INTO v_tokens, v_updated
      FROM rate_limit_buckets b WHERE b.bucket_key = p_key;
    END IF;
    IF NOT FOUND THEN
      -- Absent, or swept in between as full: a full bucket either way.
      v_tokens := p_capacity;
      v_updated := p_now;
    END IF;
    v_tokens := LEAST(p_capacity, v_tokens + GREATEST(0, p_now - v_updated) * p_per_ms);
    v_updated := GREATEST(p_now, v_updated);
    -- 1e-9: the bucket's EPSILON.
    IF p_count > 0 AND v_tokens + 1e-9 >= 1 THEN
      v_left := GREATEST(0, v_tokens - LEAST(p_count, floor(v_tokens + 1e-9)));
      -- Written so that neither the division nor the cast can leave the range of their types.
      IF p_per_ms > (p_capacity - v_left) / 4e18 THEN
        v_full_at := v_updated + ceil((p_capacity - v_left) / p_per_ms)::bigint;
      END IF;
      INSERT INTO rate_limit_buckets (bucket_key, tokens, updated_at, full_at)
      VALUES (p_key, v_left, v_updated, v_full_at)
      ON CONFLICT (bucket_key) DO UPDATE
      SET tokens = EXCLUDED.tokens, updated_at = EXCLUDED.updated_at, full_at = EXCLUDED.full_at;
    END IF;
    RETURN v_tokens;
  END
  $fn$
`
}

export const rateLimitTake: SqlFunction = {
  name: "rate_limit_take",
  version: 2,
  definition: `
  CREATE OR REPLACE FUNCTION rate_limit_take(
    p_key text, p_capacity double precision, p_per_ms double precision, p_now bigint, p_take boolean
  ) RETURNS double precision
  LANGUAGE sql AS $fn$
    SELECT rate_limit_take_up_to(p_key, p_capacity, p_per_ms, p_now, CASE WHEN p_take THEN 1 ELSE 0 END)
  $fn$
`
}
