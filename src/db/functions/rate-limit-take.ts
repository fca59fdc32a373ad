/**
 * The token bucket of `src/rate-limit/` in one statement: creates the row if absent (a concurrent
 * creator waits on it), locks it, refills it to `p_now` and, when `p_take` and a token is there,
 * takes it; returns the tokens before taking, from which the caller decides (with the same
 * epsilon) and computes Retry-After. `full_at` is when the bucket is full again; the sweep deletes
 * rows past it.
 */
import type { SqlFunction } from "../sql-functions.ts"

export const rateLimitTake: SqlFunction = {
  name: "rate_limit_take",
  definition: `
  CREATE OR REPLACE FUNCTION rate_limit_take(
    p_key text, p_capacity double precision, p_per_ms double precision, p_now bigint, p_take boolean
  ) RETURNS double precision
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_tokens double precision;
    v_updated bigint;
    v_left double precision;
  BEGIN
    IF p_take THEN
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
    IF p_take AND v_tokens + 1e-9 >= 1 THEN
      v_left := GREATEST(0, v_tokens - 1);
      INSERT INTO rate_limit_buckets (bucket_key, tokens, updated_at, full_at)
      VALUES (p_key, v_left, v_updated,
              CASE WHEN p_per_ms > 0 THEN v_updated + ceil((p_capacity - v_left) / p_per_ms)::bigint
                   ELSE 9223372036854775807 END)
      ON CONFLICT (bucket_key) DO UPDATE
      SET tokens = EXCLUDED.tokens, updated_at = EXCLUDED.updated_at, full_at = EXCLUDED.full_at;
    END IF;
    RETURN v_tokens;
  END
  $fn$
`
}
