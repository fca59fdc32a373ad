/** The console's cookies and tokens: `docs/console.md`, "Signing in" and "Forms and CSRF". */
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

export const cookieOptions = (secure: boolean, maxAgeSeconds: number) => ({
  httpOnly: true,
  sameSite: "strict" as const,
  path: CONSOLE_PATH,
  secure,
  maxAge: `${maxAgeSeconds} seconds` as const
})
