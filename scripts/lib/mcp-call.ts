/**
 * The demo's checkout calls over MCP: a `Call` that sends the Checkout Session API's requests as
 * the binding's tool calls on `/mcp` (the official SDK's client over Streamable HTTP, the bearer
 * key on the HTTP request) and every other request (delegated payment, orders) over REST. Tool
 * results come back as the REST answer's body; a JSON-RPC error as its ACP error object, with
 * status 0 (MCP has no HTTP status per call).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { randomUUID } from "node:crypto"
import { API_VERSION, type Call, type ClientOptions } from "./acp-client.ts"

/** The tool a checkout REST call is, with its session id, or undefined for any other call. */
const toolOf = (method: string, path: string): { readonly name: string; readonly id?: string } | undefined => {
  if (method === "POST" && path === "/checkout_sessions") return { name: "create_checkout_session" }
  const match = /^\/checkout_sessions\/([^/]+)(?:\/(complete|cancel))?$/.exec(path)
  if (match === null) return undefined
  const id = decodeURIComponent(match[1]!)
  if (method === "GET") return match[2] === undefined ? { name: "get_checkout_session", id } : undefined
  return { name: `${match[2] ?? "update"}_checkout_session`, id }
}

export const makeMcpCall = async (
  options: ClientOptions,
  rest: Call
): Promise<{ call: Call; tools: Array<string> }> => {
  const client = new Client({ name: "acp-demo-agent", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${options.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } }
    })
  )
  const { tools } = await client.listTools()
  const call: Call = async (method, path, body) => {
    const tool = toolOf(method, path)
    if (tool === undefined) return rest(method, path, body)
    const meta = {
      api_version: options.apiVersion ?? API_VERSION,
      ...(method === "POST" ? { idempotency_key: randomUUID() } : {}),
      request_id: `req_${randomUUID().replaceAll("-", "")}`
    }
    try {
      const result = await client.callTool({
        name: tool.name,
        arguments: {
          meta,
          ...(tool.id === undefined ? {} : { id: tool.id }),
          ...(body === undefined ? {} : { payload: body })
        }
      })
      return { status: tool.name === "create_checkout_session" ? 201 : 200, body: result.structuredContent }
    } catch (error) {
      return { status: 0, body: (error as { data?: unknown }).data ?? String(error) }
    }
  }
  return { call, tools: tools.map((tool) => tool.name) }
}
