/**
 * The HTTP message as signatures see it: our own plain shape, independent of any HTTP library, so that the
 * Effect server and client and a plain Node server can all build one.
 */

export type HeaderValue = string | ReadonlyArray<string>

export interface HttpMessage {
  /** A request's method, as sent (case-sensitive). Absent on a response. */
  readonly method?: string
  /** A request's full target URI, `https://host[:port]/path?query`. */
  readonly url?: string
  /** A response's status code; its presence makes the message a response. */
  readonly status?: number
  /** Field name (lowercase) → value, or the values of repeated field lines in their order. */
  readonly headers: { readonly [name: string]: HeaderValue | undefined }
  /** The raw content bytes (a string is taken as UTF-8). */
  readonly body?: Uint8Array | string
  /** For a response: the request it answers, for components with the `req` parameter. */
  readonly request?: HttpMessage
}

export const isResponse = (message: HttpMessage): boolean => message.status !== undefined

/** The field lines of a header in order, or `undefined` when absent; names are matched case-insensitively. */
export const headerLines = (message: HttpMessage, name: string): ReadonlyArray<string> | undefined => {
  const lower = name.toLowerCase()
  let lines: Array<string> | undefined
  for (const key of Object.keys(message.headers)) {
    if (key.toLowerCase() !== lower) continue
    const value = message.headers[key]
    if (value === undefined) continue
    lines ??= []
    if (typeof value === "string") lines.push(value)
    else lines.push(...value)
  }
  return lines
}

/** The header's lines joined with ", " (RFC 9110 §5.3), or `undefined` when absent. */
export const headerValue = (message: HttpMessage, name: string): string | undefined =>
  headerLines(message, name)?.join(", ")

export const bodyBytes = (message: HttpMessage): Uint8Array =>
  message.body === undefined
    ? new Uint8Array(0)
    : typeof message.body === "string"
    ? new Uint8Array(Buffer.from(message.body, "utf8"))
    : message.body

export const hasBody = (message: HttpMessage): boolean =>
  message.body !== undefined && (typeof message.body === "string" ? message.body.length > 0 : message.body.length > 0)

/** A copy of the message with headers set (replacing any of the same name, whatever their case). */
export const withHeaders = (
  message: HttpMessage,
  headers: { readonly [name: string]: string }
): HttpMessage => {
  const replaced = new Set(Object.keys(headers).map((name) => name.toLowerCase()))
  const kept = Object.entries(message.headers).filter(([name]) => !replaced.has(name.toLowerCase()))
  const added = Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value] as const)
  return { ...message, headers: Object.fromEntries([...kept, ...added]) }
}
