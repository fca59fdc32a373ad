/**
 * `POST /mcp`: the checkout tools over MCP Streamable HTTP on the official SDK's low-level `Server`,
 * stateless (a server and transport per HTTP request). A tool call is the REST call it stands for, run
 * through the whole application; results and errors: `docs/mcp.md`, "One service underneath".
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Runtime, Schema } from "effect"
import { internalError } from "../../platform/http/errors.ts"
import { errorResponse } from "../../platform/http/middleware.ts"
import { parseJsonWithinDepth, readRawBody } from "../../platform/http/request-body.ts"
import { forbidden, makeBearerCheck, unauthorized } from "../../platform/http/security.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { firstFailureAtJsonPath } from "../../shared/schema-failure.ts"
import {
  argumentsOf,
  CHECKOUT_TOOLS,
  type CheckoutTool,
  inputSchemaOf,
  META_HEADERS,
  type ToolArguments,
  ToolCallParams,
  toolNamed
} from "./checkout-tools.ts"

export const MCP_PATH = "/mcp"

const ACP_ERROR = -32000
const INVALID_PARAMS = -32602
const INVALID_REQUEST = -32600
const METHOD_NOT_FOUND = -32601
const INTERNAL_ERROR = -32603

/** An empty batch is an Invalid Request (JSON-RPC 2.0 §6); the SDK alone would take it for notifications. */
const emptyBatchResponse = () =>
  HttpServerResponse.unsafeJson({
    jsonrpc: "2.0",
    error: { code: INVALID_REQUEST, message: "Invalid Request: Batch must not be empty" },
    id: null
  }, { status: 400 })

/** A JSON-RPC error the SDK sends as is: an `McpError` would prefix the ACP message the binding carries. */
class ToolCallError extends Error {
  constructor(readonly code: number, message: string, readonly data?: Record<string, unknown>) {
    super(message)
  }
}

const internalToolError = () => {
  const failure = internalError()
  return new ToolCallError(ACP_ERROR, failure.message, {
    type: failure.type,
    code: failure.code,
    message: failure.message
  })
}

const PARAMS_REFUSED = "The request's params are not what its method takes."

/**
 * The SDK answers params its own schemas refuse with InternalError and its schema library's text; our
 * handlers throw only coded errors, so an InternalError on its way out is that refusal: sent as -32602.
 */
const withoutSdkParseText = (message: JSONRPCMessage): JSONRPCMessage =>
  "error" in message && message.error.code === INTERNAL_ERROR
    ? {
      ...message,
      error: {
        code: INVALID_PARAMS,
        message: PARAMS_REFUSED,
        data: { type: "invalid_request", code: "invalid", message: PARAMS_REFUSED }
      }
    }
    : message

/** How the application answers one request (the whole app, middleware included). */
export type Dispatch = (
  request: HttpServerRequest.HttpServerRequest
) => Effect.Effect<HttpServerResponse.HttpServerResponse>

const META_FIELD_OF_HEADER = new Map<string, string>([
  ["api-version", "api_version"],
  ...META_HEADERS.map(([field, header]) => [header, field] as const)
])

const HEADER_PARAM = /^\$\.headers\['([^']+)'\]$/

/** A REST `param` rooted at the tool's arguments: `$.payload…`, `$.id`, a header's `meta` field, else as is. */
export const toolParam = (param: string): string => {
  if (param === "$.checkout_session_id") return "$.id"
  const header = HEADER_PARAM.exec(param)
  if (header !== null) {
    const field = META_FIELD_OF_HEADER.get(header[1]!.toLowerCase())
    return field === undefined ? param : `$.meta.${field}`
  }
  return param.startsWith("$") ? `$.payload${param.slice(1)}` : param
}

/** A REST error rooted at the tool's arguments: its `param`, and its message where it starts with it. */
const rerooted = (error: Record<string, unknown>, param: string): Record<string, unknown> => {
  const message = error["message"]
  return {
    ...error,
    ...(typeof message === "string" && message.startsWith(`${param} `)
      ? { message: toolParam(param) + message.slice(param.length) }
      : {}),
    param: toolParam(param)
  }
}

const invalidArguments = (error: Parameters<typeof firstFailureAtJsonPath>[0]) => {
  const failure = firstFailureAtJsonPath(error)
  return new ToolCallError(INVALID_PARAMS, failure.message, {
    type: "invalid_request",
    code: failure.kind,
    message: failure.message,
    param: failure.param
  })
}

const decodeCallParams = Schema.decodeUnknownEither(ToolCallParams, { errors: "first", onExcessProperty: "ignore" })

const parsedObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined
  } catch {
    return undefined
  }
}

const restRequest = (tool: CheckoutTool, args: ToolArguments, authorization: string | undefined): Request => {
  const headers = new Headers({ "api-version": args.meta.api_version })
  if (authorization !== undefined) headers.set("authorization", authorization)
  for (const [field, header] of META_HEADERS) {
    const value = args.meta[field]
    if (value !== undefined) headers.set(header, value)
  }
  const body = args.payload === undefined ? undefined : JSON.stringify(args.payload)
  if (body !== undefined) {
    headers.set("content-type", "application/json")
    headers.set("content-length", String(Buffer.byteLength(body, "utf8")))
  }
  return new Request(`http://mcp.internal${tool.path(args.id ?? "")}`, {
    method: tool.method,
    headers,
    ...(body === undefined ? {} : { body })
  })
}

const callTool = Effect.fnUntraced(
  function*(dispatch: Dispatch, tool: CheckoutTool, raw: unknown, authorization: string | undefined) {
    const decoded = Schema.decodeUnknownEither(argumentsOf(tool), { errors: "first", onExcessProperty: "ignore" })(
      raw ?? {}
    )
    if (Either.isLeft(decoded)) return yield* Effect.fail(invalidArguments(decoded.left))
    const response = yield* dispatch(
      HttpServerRequest.fromWeb(restRequest(tool, decoded.right as ToolArguments, authorization))
    )
    const text = yield* Effect.promise(() => HttpServerResponse.toWeb(response).text())
    const body = parsedObject(text)
    if (body === undefined) return yield* Effect.fail(internalToolError())
    if (response.status >= 200 && response.status < 300) {
      return { ...body, structuredContent: body, content: [{ type: "text" as const, text }] }
    }
    const error = typeof body["param"] === "string" ? rerooted(body, body["param"]) : body
    return yield* Effect.fail(new ToolCallError(ACP_ERROR, String(error["message"] ?? "Request failed"), error))
  }
)

const TOOLS = CHECKOUT_TOOLS.map((tool) => ({
  name: tool.name,
  description: tool.description,
  inputSchema: inputSchemaOf(tool) as { type: "object"; [key: string]: unknown }
}))

/** Loaded on the first MCP request: a server nobody calls over MCP need not hold the SDK in memory. */
const loadSdk = async () => {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { ListToolsRequestSchema }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return { Server, WebStandardStreamableHTTPServerTransport, ListToolsRequestSchema }
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>

const mcpServer = (
  { ListToolsRequestSchema, Server }: Sdk,
  dispatch: Dispatch,
  runtime: Runtime.Runtime<never>,
  authorization: string | undefined
) => {
  const server = new Server({ name: "agentic-checkout", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
  // tools/call is decoded here, not by the SDK's schema, whose refusals would carry its library's text.
  server.fallbackRequestHandler = async (request) => {
    if (request.method !== "tools/call") throw new ToolCallError(METHOD_NOT_FOUND, "Method not found")
    const params = decodeCallParams(request.params ?? {})
    if (Either.isLeft(params)) throw invalidArguments(params.left)
    const tool = toolNamed(params.right.name)
    if (tool === undefined) {
      const message = `Unknown tool ${maskCardNumbers(params.right.name)}; the tools are ${
        CHECKOUT_TOOLS.map((t) => t.name).join(", ")
      }.`
      throw new ToolCallError(INVALID_PARAMS, message, {
        type: "invalid_request",
        code: "invalid",
        message,
        param: "$.name"
      })
    }
    const outcome = await Runtime.runPromise(runtime)(
      callTool(dispatch, tool, params.right.arguments, authorization).pipe(
        // A defect is answered as any unexpected failure, never with its own text.
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(Effect.logError("MCP tool call failed", defect), Effect.fail(internalToolError()))
        ),
        Effect.either
      )
    )
    if (Either.isLeft(outcome)) throw outcome.left
    return outcome.right
  }
  return server
}

/** The `/mcp` route: 401 before any MCP message without a valid key, 403 for a merchant key, else the SDK's answer. */
export const makeMcpEndpoint = Effect.gen(function*() {
  const checkBearer = yield* makeBearerCheck(
    "agent",
    (problem) => problem === "unauthorized" ? unauthorized() : forbidden("agent")
  )
  const sdk = yield* Effect.cached(Effect.promise(loadSdk))
  return Effect.fnUntraced(
    function*(dispatch: Dispatch) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = yield* Effect.either(checkBearer)
      if (Either.isLeft(refused)) {
        return refused.left._tag === "Unauthorized"
          ? errorResponse(refused.left).pipe(HttpServerResponse.setHeader("www-authenticate", "Bearer"))
          : errorResponse(refused.left)
      }
      const body = yield* readRawBody
      const text = new TextDecoder().decode(body)
      // Too deep a body is refused before the SDK (or anything recursive) reads it; parsed once, the SDK
      // takes the value, and answers malformed JSON itself (-32700).
      const parsed = parseJsonWithinDepth(text)
      if (Either.isLeft(parsed)) return errorResponse(parsed.left)
      const parsedBody = parsed.right
      const headers = new Headers(request.headers as Record<string, string>)
      headers.delete("content-length")
      const web = new Request(`http://mcp.internal${MCP_PATH}`, {
        method: request.method,
        headers,
        ...(parsedBody === undefined ? { body: text } : {})
      })
      const runtime = yield* Effect.runtime<never>()
      const loaded = yield* sdk
      const server = mcpServer(loaded, dispatch, runtime, request.headers["authorization"])
      const transport = new loaded.WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
      const answer = yield* Effect.tryPromise({
        try: async () => {
          await server.connect(transport)
          const send = transport.send.bind(transport)
          transport.send = (message, options) => send(withoutSdkParseText(message), options)
          try {
            return await transport.handleRequest(web, parsedBody === undefined ? undefined : { parsedBody })
          } finally {
            await transport.close()
            await server.close()
          }
        },
        catch: (cause) => cause
      }).pipe(
        Effect.tapError((cause) => Effect.logError("MCP request failed", cause)),
        Effect.orElseSucceed(() => undefined)
      )
      if (answer === undefined) return errorResponse(internalError())
      // Checked on the SDK's answer, so that its header checks (406, 415) still come first.
      if (answer.status === 202 && Array.isArray(parsedBody) && parsedBody.length === 0) return emptyBatchResponse()
      return HttpServerResponse.fromWeb(answer)
    },
    Effect.catchTags({
      BadRequest: errorResponse,
      PayloadTooLarge: errorResponse
    })
  )
})
