/**
 * Requests Node's HTTP parser refuses before any route sees them: Node's status, the error object of every
 * other answer (CONTRACT §3), then the connection closed. Nothing of the request is repeated.
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

export const clientErrorLogLine = (code: string | undefined): string =>
  `client error ${answerOf(code).status} ${code ?? "unknown"}`

// As Node's own listener: answers only a writable socket with no response under way, never a reset one.
export const answerClientError =
  (answered: (logLine: string) => void) => (error: Error & { readonly code?: string }, socket: Duplex): void => {
    const inFlight = (socket as Duplex & { readonly _httpMessage?: { readonly headersSent?: boolean } })._httpMessage
    if (error.code !== "ECONNRESET" && socket.writable && inFlight?.headersSent !== true) {
      socket.write(clientErrorResponse(error.code))
      answered(clientErrorLogLine(error.code))
    }
    socket.destroy()
  }
