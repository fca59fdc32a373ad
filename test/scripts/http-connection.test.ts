import { afterEach, describe, expect, it } from "@effect/vitest"
import { createServer, type Server, type Socket } from "node:net"
import { HttpConnection } from "../../scripts/lib/http-connection.ts"

/** A TCP server that answers each request it reads with the next of `answers` (raw bytes, in pieces). */
const serve = async (answers: ReadonlyArray<ReadonlyArray<string> | "close">) => {
  const received: Array<string> = []
  let connections = 0
  let next = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    connections++
    sockets.add(socket)
    let buffered = ""
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1")
      for (;;) {
        const headerEnd = buffered.indexOf("\r\n\r\n")
        if (headerEnd < 0) return
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, headerEnd))?.[1] ?? 0)
        if (buffered.length < headerEnd + 4 + length) return
        received.push(buffered.slice(0, headerEnd + 4 + length))
        buffered = buffered.slice(headerEnd + 4 + length)
        const answer = answers[next++]!
        if (answer === "close") socket.destroy()
        else for (const piece of answer) socket.write(piece)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  opened.push(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    received,
    connections: () => connections,
    /** The server closes every idle connection, as a keep-alive timeout does. */
    closeIdle: () => {
      for (const socket of sockets) socket.end()
    }
  }
}

const opened: Array<() => void> = []
afterEach(() => {
  for (const close of opened.splice(0)) close()
})

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${
    Buffer.byteLength(body)
  }\r\n${extra}\r\n${body}`

describe("the flow's HTTP connection", () => {
  it("sends requests one after another on one connection and reads bodies by content-length, in pieces", async () => {
    const body = JSON.stringify({ id: "cs_1", note: "café" })
    const whole = ok(body)
    const server = await serve([[whole.slice(0, 10), whole.slice(10, 60), whole.slice(60)], [ok("{}")]])
    const connection = new HttpConnection(server.baseUrl)
    const first = await connection.request("POST", "/checkout_sessions", { "api-version": "2025-09-29" }, "{\"a\":1}")
    const second = await connection.request("POST", "/checkout_sessions/cs_1", {}, "ü")
    connection.close()
    expect(first).toEqual({ status: 200, text: body })
    expect(second).toEqual({ status: 200, text: "{}" })
    expect(server.connections()).toBe(1)
    expect(server.received[0]).toMatch(/^POST \/checkout_sessions HTTP\/1\.1\r\n/)
    expect(server.received[0]).toContain("api-version: 2025-09-29\r\n")
    expect(server.received[0]!.endsWith("content-length: 7\r\n\r\n{\"a\":1}")).toBe(true)
    expect(server.received[1]).toContain("content-length: 2\r\n")
  })

  it("reads chunked bodies, with or without trailers, and keeps the connection", async () => {
    const chunked = (trailer: string) => [
      "HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{\"a\":",
      "\r\n3\r\n12}\r\n",
      `0\r\n${trailer}\r\n`
    ]
    const server = await serve([chunked(""), chunked("x-checksum: 1\r\n")])
    const connection = new HttpConnection(`${server.baseUrl}/`)
    expect(await connection.request("POST", "/a", {}, "")).toEqual({ status: 201, text: "{\"a\":12}" })
    expect(await connection.request("POST", "/b", {}, "")).toEqual({ status: 201, text: "{\"a\":12}" })
    connection.close()
    expect(server.connections()).toBe(1)
  })

  it("opens a new connection after a response that closes it, and after the server closed an idle one", async () => {
    const server = await serve([[ok("1", "connection: close\r\n")], [ok("2")], [ok("3")]])
    const connection = new HttpConnection(server.baseUrl)
    expect((await connection.request("POST", "/", {}, "")).text).toBe("1")
    expect((await connection.request("POST", "/", {}, "")).text).toBe("2")
    server.closeIdle()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await connection.request("POST", "/", {}, "")).text).toBe("3")
    connection.close()
    expect(server.connections()).toBe(3)
  })

  it("rejects the request when the server drops the connection or answers malformed chunks or no length", async () => {
    const server = await serve([
      "close",
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"],
      ["HTTP/1.1 200 OK\r\n\r\n{}"],
      ["HTTP/1.1 204 No Content\r\n\r\n"],
      [ok("ok")]
    ])
    const connection = new HttpConnection(server.baseUrl)
    await expect(connection.request("POST", "/", {}, "")).rejects.toThrow("connection closed before the response")
    await expect(connection.request("POST", "/", {}, "")).rejects.toThrow("malformed chunk size")
    await expect(connection.request("POST", "/", {}, "")).rejects.toThrow("a 200 response without content-length")
    expect(await connection.request("POST", "/", {}, "")).toEqual({ status: 204, text: "" })
    expect((await connection.request("POST", "/", {}, "")).text).toBe("ok")
    connection.close()
  })

  it("refuses a second request while one is pending, and URLs that are not http:", async () => {
    const server = await serve([[ok("late")]])
    const connection = new HttpConnection(server.baseUrl)
    const first = connection.request("POST", "/", {}, "")
    await expect(connection.request("POST", "/", {}, "")).rejects.toThrow("one request at a time")
    expect((await first).text).toBe("late")
    connection.close()
    expect(() => new HttpConnection("https://127.0.0.1:1")).toThrow("only http:")
  })
})
