/**
 * The merchant console's cookies and tokens. Signing in with an API key opens a console session:
 * a random token in an `HttpOnly`, `SameSite=Strict` cookie scoped to `/console` (`Secure` when
 * the service is reached over HTTPS). The store keeps only the token's SHA-256, so a read of the
 * database opens no session. Every form carries the session's synchronizer CSRF token; the
 * sign-in form, before any session exists, carries a token that must equal its own short-lived
 * cookie (double submit), so no other site can sign a browser in.
 */
import { createHash, timingSafeEqual } from "node:crypto"

export const CONSOLE_PATH = "/console"
export const SESSION_COOKIE = "acp_console"
export const SIGN_IN_COOKIE = "acp_console_sign_in"

/** A console session lasts this long from sign-in, whatever is done in it (then: sign in again). */
export const CONSOLE_SESSION_TTL_MS = 8 * 60 * 60 * 1000
/** How long a sign-in form stays usable. */
export const SIGN_IN_TTL_SECONDS = 15 * 60

/** The stored form of a session token. */
export const tokenHash = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

/** Whether two tokens are equal, in time that does not depend on where they differ. */
export const sameToken = (given: string | undefined, expected: string): boolean => {
  if (given === undefined || given.length === 0) return false
  const a = createHash("sha256").update(given, "utf8").digest()
  const b = createHash("sha256").update(expected, "utf8").digest()
  return timingSafeEqual(a, b)
}

/** The attributes every console cookie is set with. */
export const cookieOptions = (secure: boolean, maxAgeSeconds: number) => ({
  httpOnly: true,
  sameSite: "strict" as const,
  path: CONSOLE_PATH,
  secure,
  maxAge: `${maxAgeSeconds} seconds` as const
})
