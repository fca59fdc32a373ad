/**
 * One keep-alive HTTP/1.1 connection that sends one request at a time: the flow's agents each hold
 * one per server. A load generator's CPU per request is on the path of every request at one
 * agent, for the server under test and for the build it is measured against alike, so it narrows
 * their ratio; with this the flow's load side spends under half the CPU per checkout it did on
 * `node:http`'s client (its agent, streams and header objects), which itself cost half of `fetch`'s.
 *
 * Responses are read by `content-length` or `transfer-encoding: chunked` (one with neither and a
 * status that has a body is refused: the servers measured always send one); a response that says
 * `connection: close`, or a connection the server closed while idle, is replaced by a new one
 * before the next request. Anything else unexpected rejects the request, and the connection is
 * dropped.
 */
import { connect, type Socket } from "node:net"

export interface HttpResponse {
  readonly status: number
  readonly text: string
}

const HEADER_END = Buffer.from("\r\n\r\n")

interface Pending {
  /** The connection the request went out on: only its loss fails the request. */
  readonly socket: Socket
  readonly resolve: (response: HttpResponse) => void
  readonly reject: (error: Error) => void
}

export class HttpConnection {
  private socket: Socket | undefined
  private buffered: Buffer = Buffer.alloc(0)
  private pending: Pending | undefined
  private readonly host: string
  private readonly port: number
  /** The base URL's own path, before every request's. */
  private readonly prefix: string

  constructor(baseUrl: string) {
    const url = new URL(baseUrl)
    if (url.protocol !== "http:") throw new Error(`only http: is supported: ${baseUrl}`)
    this.host = url.hostname
    this.port = Number(url.port === "" ? 80 : url.port)
    this.prefix = url.pathname.replace(/\/$/, "")
  }

  /** Sends `method path` with the headers (lower-case names) and body; resolves with the whole response. */
  request(method: string, path: string, headers: Readonly<Record<string, string>>, body: string) {
    if (this.pending !== undefined) return Promise.reject(new Error("one request at a time per connection"))
    const socket = this.socket ?? this.open()
    let head = `${method} ${this.prefix}${path} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\n`
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`
    head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`
    return new Promise<HttpResponse>((resolve, reject) => {
      this.pending = { socket, resolve, reject }
      socket.write(head + body)
    })
  }

  close() {
    this.socket?.destroy()
    this.socket = undefined
    this.buffered = Buffer.alloc(0)
  }

  private open() {
    const socket = connect({ host: this.host, port: this.port, noDelay: true })
    const lost = (error: Error) => {
      if (this.socket !== socket) return
      this.socket = undefined
      this.buffered = Buffer.alloc(0)
      if (this.pending?.socket === socket) this.settle((pending) => pending.reject(error))
    }
    socket.on("data", (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
      try {
        this.parse()
      } catch (error) {
        lost(error instanceof Error ? error : new Error(String(error)))
        socket.destroy()
      }
    })
    socket.on("error", lost)
    socket.on("close", () => lost(new Error("connection closed before the response")))
    this.socket = socket
    return socket
  }

  private settle(complete: (pending: Pending) => void) {
    const pending = this.pending
    this.pending = undefined
    if (pending !== undefined) complete(pending)
  }

  /** Completes the pending request once its whole response is buffered. */
  private parse() {
    const headerEnd = this.buffered.indexOf(HEADER_END)
    if (headerEnd < 0) return
    const head = this.buffered.toString("latin1", 0, headerEnd).split("\r\n")
    const status = Number(head[0]!.split(" ")[1])
    let length: number | undefined
    let chunked = false
    let closing = false
    for (let i = 1; i < head.length; i++) {
      const line = head[i]!
      const colon = line.indexOf(":")
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim().toLowerCase()
      if (name === "content-length") length = Number(value)
      else if (name === "transfer-encoding") chunked = value.includes("chunked")
      else if (name === "connection") closing = value === "close"
    }
    const bodyStart = headerEnd + HEADER_END.length
    let text: string
    let consumed: number
    if (chunked) {
      const decoded = decodeChunked(this.buffered, bodyStart)
      if (decoded === undefined) return
      text = decoded.text
      consumed = decoded.end
    } else {
      if (length === undefined && status !== 204 && status !== 304) {
        throw new Error(`a ${status} response without content-length or chunked encoding`)
      }
      const size = length ?? 0
      if (this.buffered.length < bodyStart + size) return
      text = this.buffered.toString("utf8", bodyStart, bodyStart + size)
      consumed = bodyStart + size
    }
    this.buffered = this.buffered.subarray(consumed)
    if (closing) this.close()
    this.settle((pending) => pending.resolve({ status, text }))
  }
}

/** A whole chunked body from `start`: its text and where it ends, or undefined while incomplete. */
const decodeChunked = (buffer: Buffer, start: number): { text: string; end: number } | undefined => {
  const parts: Array<Buffer> = []
  let at = start
  for (;;) {
    const lineEnd = buffer.indexOf("\r\n", at)
    if (lineEnd < 0) return undefined
    const size = parseInt(buffer.toString("latin1", at, lineEnd), 16)
    if (Number.isNaN(size)) throw new Error("malformed chunk size in the response")
    if (size === 0) {
      // The last chunk's line is followed by optional trailer lines and an empty line: the body
      // ends at the first blank line from that line's own end.
      const blank = buffer.indexOf(HEADER_END, lineEnd)
      if (blank < 0) return undefined
      return { text: Buffer.concat(parts).toString("utf8"), end: blank + HEADER_END.length }
    }
    const dataStart = lineEnd + 2
    if (buffer.length < dataStart + size + 2) return undefined
    parts.push(buffer.subarray(dataStart, dataStart + size))
    at = dataStart + size + 2
  }
}
