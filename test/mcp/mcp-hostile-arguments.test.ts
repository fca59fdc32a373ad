/**
 * MCP tool calls with arguments no REST request could carry: `meta` values that are no header
 * text, a session id storage cannot hold, a body nested deeper than any REST body may be, a body
 * that is not JSON, an empty batch. Each is refused as the client's mistake (`-32602` at its path, or a 400), never an internal error; and a
 * REST error's message is rooted at the tool's arguments like its `param`.
 */
import { describe, expect, it } from "@effect/vitest"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, TestClock } from "effect"
import { createRequest, NOW } from "../support/acp-fixtures.ts"
import { request, testApp } from "../support/http.ts"
import { callTool, connectMcp } from "../support/mcp-client.ts"

const VERSION = "2026-04-17"
const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), testApp()) as Effect.Effect<A, E, never>

let keys = 0
const meta = () => ({ api_version: VERSION, idempotency_key: `mcp_hostile_${++keys}` })

describe("MCP tool calls with hostile arguments", () => {
  it.effect("a meta field that is no header text: -32602 at its path", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      for (
        const [field, value] of [
          ["user_agent", "agent\r\nX-Injected: 1"],
          ["request_id", "req\u0000"],
          ["accept_language", "en 🙂"],
          ["idempotency_key", "key\ud800"],
          ["api_version", "2026-04-17\n"]
        ] as const
      ) {
        const refused = yield* callTool(client, "create_checkout_session", {
          meta: { ...meta(), [field]: value },
          payload: createRequest(VERSION)
        })
        expect(refused.ok, field).toBe(false)
        if (refused.ok) continue
        expect(refused.error.code, field).toBe(-32602)
        expect(refused.error.data, field).toMatchObject({ type: "invalid_request", param: `$.meta.${field}` })
      }
    })))

  it.effect("a session id storage cannot hold: -32602 at $.id", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      for (const id of ["cs_\ud800", "cs_\u0000"]) {
        const refused = yield* callTool(client, "get_checkout_session", { meta: meta(), id })
        expect(refused.ok).toBe(false)
        if (refused.ok) continue
        expect(refused.error.code).toBe(-32602)
        expect(refused.error.data).toMatchObject({ param: "$.id" })
      }
    })))

  it.effect("a body nested deeper than any REST body: 400 invalid_json before any tool runs", () =>
    run(Effect.gen(function*() {
      const depth = 10_000
      const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_checkout_session",` +
        `"arguments":{"meta":{"api_version":"${VERSION}","idempotency_key":"deep"},"payload":{"x":` +
        "[".repeat(depth) + "]".repeat(depth) + "}}}}"
      const response = yield* request("POST", "/mcp", {
        body,
        version: false,
        headers: { accept: "application/json, text/event-stream" }
      })
      expect(response.status).toBe(400)
      expect(response.body).toMatchObject({ type: "invalid_request", code: "invalid_json" })
    })))

  it.effect("malformed JSON is the MCP transport's to answer: JSON-RPC -32700", () =>
    run(Effect.gen(function*() {
      const headers = { accept: "application/json, text/event-stream" }
      for (const body of ["{\"jsonrpc\":\"2.0\",", "not json"]) {
        const response = yield* request("POST", "/mcp", { body, version: false, headers })
        expect(response.status, body).toBe(400)
        expect(response.body, body).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } })
      }
    })))

  it.effect("an empty batch is an Invalid Request (-32600, id null), HTTP 400 as the transport's own", () =>
    run(Effect.gen(function*() {
      const headers = { accept: "application/json, text/event-stream" }
      for (const body of ["[]", " [ ] "]) {
        const response = yield* request("POST", "/mcp", { body, version: false, headers })
        expect(response.status, body).toBe(400)
        expect(response.body, body).toEqual({
          jsonrpc: "2.0",
          error: { code: -32600, message: "Invalid Request: Batch must not be empty" },
          id: null
        })
      }
      // The SDK's own Invalid Request, a batch over its bound, is answered with the same status.
      const ping = { jsonrpc: "2.0", method: "notifications/initialized" }
      const tooMany = yield* request("POST", "/mcp", { body: Array(101).fill(ping), version: false, headers })
      expect([tooMany.status, tooMany.body.error.code]).toEqual([400, -32600])
      // Its header checks still come first.
      const notAccepted = yield* request("POST", "/mcp", { body: "[]", version: false })
      expect(notAccepted.status).toBe(406)
      // A batch of notifications alone is still accepted with 202 and no body.
      const notified = yield* request("POST", "/mcp", { body: [ping], version: false, headers })
      expect([notified.status, notified.text]).toEqual([202, ""])
    })))

  it.effect("tools/call params the SDK's schema refuses: -32602 with our error object, never the SDK's text", () =>
    run(Effect.gen(function*() {
      const headers = { accept: "application/json, text/event-stream" }
      const args = { meta: meta() }
      const cases = [
        [{ name: "get_checkout_session", arguments: "x" }, "invalid", "$.arguments", "$.arguments must be an object"],
        [{ name: "get_checkout_session", arguments: [] }, "invalid", "$.arguments", "$.arguments must be an object"],
        [{ name: "get_checkout_session", arguments: null }, "invalid", "$.arguments", "$.arguments must be an object"],
        [{ arguments: args }, "missing", "$.name", "$.name is required"],
        [{ name: 7, arguments: args }, "invalid", "$.name", "$.name must be a string"],
        [undefined, "missing", "$.name", "$.name is required"]
      ] as const
      for (const [params, code, param, message] of cases) {
        const body = { jsonrpc: "2.0", id: 1, method: "tools/call", ...(params === undefined ? {} : { params }) }
        const response = yield* request("POST", "/mcp", { body, version: false, headers })
        const what = JSON.stringify(params)
        expect(response.status, what).toBe(200)
        expect(response.body, what).toEqual({
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32602, message, data: { type: "invalid_request", code, message, param } }
        })
      }
      // Through the SDK's own client too, which sends what it is given.
      const client = yield* connectMcp()
      const refused = yield* Effect.promise(() =>
        client.request(
          { method: "tools/call", params: { name: "get_checkout_session", arguments: [] as any } },
          CallToolResultSchema
        ).then(() => undefined, (error: { code?: number; data?: unknown }) => error)
      )
      expect(refused).toMatchObject({ code: -32602, data: { param: "$.arguments", code: "invalid" } })
    })))

  it.effect("params another SDK-parsed method refuses (tools/list, initialize): -32602, none of the schema library's text", () =>
    run(Effect.gen(function*() {
      const headers = { accept: "application/json, text/event-stream" }
      for (
        const [method, params] of [["tools/list", { cursor: 5 }], ["initialize", { protocolVersion: 5 }]] as const
      ) {
        const response = yield* request("POST", "/mcp", {
          body: { jsonrpc: "2.0", id: 2, method, params },
          version: false,
          headers
        })
        expect(response.status, method).toBe(200)
        const message = "The request's params are not what its method takes."
        expect(response.body, method).toEqual({
          jsonrpc: "2.0",
          id: 2,
          error: { code: -32602, message, data: { type: "invalid_request", code: "invalid", message } }
        })
      }
      const unknown = yield* request("POST", "/mcp", {
        body: { jsonrpc: "2.0", id: 3, method: "resources/list" },
        version: false,
        headers
      })
      expect(unknown.body).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found" } })
    })))

  it.effect("a REST error's message names the field as its param does: at the tool's arguments", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      const refused = yield* callTool(client, "create_checkout_session", {
        meta: meta(),
        payload: { ...createRequest(VERSION), currency: undefined }
      })
      expect(refused.ok).toBe(false)
      if (refused.ok) return
      expect(refused.error.data).toMatchObject({
        param: "$.payload.currency",
        message: "$.payload.currency is required"
      })
      expect(refused.error.message).toMatch(/: \$\.payload\.currency is required$/)
    })))
})
