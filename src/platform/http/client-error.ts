/**
 * Requests Node's HTTP parser refuses before any route sees them (a malformed request line or
 * header, headers over Node's limit, a broken chunked body, a request not received in time) are
 * answered here instead of by Node's bare status line: the same statuses Node would send, with
 * the error object every other answer has (CONTRACT §3), then the connection closed, as Node
 * closes it. Nothing of the request is repeated in the answer.
 */
import { STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { BadRequest, errorBody, PayloadTooLarge } from "./errors.ts"

/** The status Node gives each parser failure (`_http_server.js`), and our error object for it. */
const answerOf = (code: string | undefined): { readonly status: number; readonly body: Record<string, unknown> } => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        body: errorBody(
          new PayloadTooLarge({
            type: "invalid_request",
            code: "request_too_large",
            message: "The request's headers are larger than this server accepts."
          })
        )
      }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return {
        status: 413,
        body: errorBody(
          new PayloadTooLarge({
            type: "invalid_request",
            code: "request_too_large",
            message: "The request's chunk extensions are larger than this server accepts."
          })
        )
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        body: errorBody(
          new BadRequest({
            type: "invalid_request",
            code: "invalid",
            message: "The request was not received in time."
          })
        )
      }
    default:
      return {
        status: 400,
        body: errorBody(
          new BadRequest({
            type: "invalid_request",
            code: "invalid",
            message: "The request is not valid HTTP/1.1."
          })
        )
      }
  }
}

/** The raw response for a parser failure with Node's error `code`. */
export const clientErrorResponse = (code: string | undefined): string => {
  const { body, status } = answerOf(code)
  const text = JSON.stringify(body)
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    "Content-Type: application/json\r\n" +
    "Content-Language: en\r\n" +
    `Content-Length: ${Buffer.byteLength(text)}\r\n` +
    "Connection: close\r\n\r\n" +
    text
}

/**
 * The access log line of a refused request: its status and Node's code for the failure, never
 * anything of the request itself (its bytes are not valid HTTP and may hold anything).
 */
export const clientErrorLogLine = (code: string | undefined): string =>
  `client error ${answerOf(code).status} ${code ?? "unknown"}`

/**
 * The server's `clientError` listener. As Node's own default: an answer only while the socket is
 * writable and no response of it has begun (a keep-alive connection may have one in flight), none
 * to a connection the client reset; the socket is then destroyed. Each answer is reported to
 * `answered` with its access log line.
 */
export const answerClientError =
  (answered: (logLine: string) => void) => (error: Error & { readonly code?: string }, socket: Duplex): void => {
    // The response Node is writing on this connection, if any (its own check, `_httpMessage`).
    const inFlight = (socket as Duplex & { readonly _httpMessage?: { readonly headersSent?: boolean } })._httpMessage
    if (error.code !== "ECONNRESET" && socket.writable && inFlight?.headersSent !== true) {
      socket.write(clientErrorResponse(error.code))
      answered(clientErrorLogLine(error.code))
    }
    socket.destroy()
  }
