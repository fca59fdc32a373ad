/**
 * An MCP client for tests: the official SDK's `Client` over its Streamable HTTP transport, whose
 * requests go straight into the application (no port), with the test API key unless told.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { API_KEY, appHandler } from "./http.ts"

export const connectMcp = (options: { readonly auth?: string | false } = {}) =>
  Effect.gen(function*() {
    const handler = yield* appHandler
    const headers: Record<string, string> = options.auth === false
      ? {}
      : { authorization: `Bearer ${options.auth ?? API_KEY}` }
    const transport = new StreamableHTTPClientTransport(new URL("http://acp.test/mcp"), {
      requestInit: { headers },
      fetch: (url, init) => handler(new Request(url, init))
    })
    const client = new Client({ name: "acp-tests", version: "1.0.0" })
    yield* Effect.promise(() => client.connect(transport))
    return client
  })

/** A tool call's result, or the error it threw (an `McpError` with `code` and `data`). */
export const callTool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() =>
    client.callTool({ name, arguments: args }).then(
      (result) => ({ ok: true as const, result: result as Record<string, any> }),
      (error: { code?: number; data?: any; message?: string }) => ({ ok: false as const, error })
    )
  )
