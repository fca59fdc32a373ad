/**
 * The checkout tools of ACP's MCP binding (2026-04-17), each described by the REST call it stands for;
 * input schemas come from the newest version's REST request schemas, bundled without references as the
 * binding requires.
 */
import { JSONSchema, Schema } from "effect"
import { checkoutCodecs } from "../../checkout/wire/acp/versions.ts"
import { NEWEST_API_VERSION } from "../../shared/api-versions.ts"
import { bundleJsonSchema } from "../../shared/json-schema-bundle.ts"
import { optional } from "../../shared/schema-helpers.ts"
import { StorableString } from "../../shared/storable-text.ts"

/** What a header carries (`meta`'s fields become headers): no control character but tab, nothing above U+00FF. */
const HeaderText = Schema.String.pipe(
  Schema.pattern(/^[\t\x20-\x7e\x80-\xff]*$/, {
    message: () => "must be text a header can carry: no control characters, nothing above U+00FF"
  })
)

/** The REST headers of the call; open, as in the binding's OpenRPC schema: fields it does not name are ignored. */
export const ToolMeta = Schema.Struct({
  api_version: HeaderText.annotations({ description: "API-Version of the call (YYYY-MM-DD)" }),
  idempotency_key: optional(
    HeaderText.annotations({ description: "Idempotency-Key: required on every call but get from 2026-04-17" })
  ),
  request_id: optional(HeaderText.annotations({ description: "Request-Id, echoed in logs" })),
  user_agent: optional(HeaderText),
  accept_language: optional(HeaderText),
  signature: optional(HeaderText.annotations({ description: "Signature of the payload, as the REST header" })),
  timestamp: optional(
    HeaderText.annotations({
      description: "Timestamp of the signature (RFC 3339)",
      jsonSchema: { format: "date-time" }
    })
  )
}).annotations({ identifier: "Meta", jsonSchema: { additionalProperties: true } })
export type ToolMeta = typeof ToolMeta.Type

/** The REST headers `meta` stands for, but `API-Version`. */
export const META_HEADERS: ReadonlyArray<readonly [Exclude<keyof ToolMeta, "api_version">, string]> = [
  ["idempotency_key", "idempotency-key"],
  ["request_id", "request-id"],
  ["user_agent", "user-agent"],
  ["accept_language", "accept-language"],
  ["signature", "signature"],
  ["timestamp", "timestamp"]
]

export type ToolName =
  | "create_checkout_session"
  | "get_checkout_session"
  | "update_checkout_session"
  | "complete_checkout_session"
  | "cancel_checkout_session"

export interface CheckoutTool {
  readonly name: ToolName
  readonly description: string
  readonly method: "GET" | "POST"
  readonly path: (id: string) => string
  readonly takesId: boolean
  /** Whether the arguments carry `payload` (the REST body), and whether it may be left out. */
  readonly payload: "required" | "optional" | "none"
  readonly payloadSchema: Schema.Schema.AnyNoContext | undefined
}

const newest = checkoutCodecs[NEWEST_API_VERSION]
const sessionPath = (id: string) => `/checkout_sessions/${encodeURIComponent(id)}`

export const CHECKOUT_TOOLS: ReadonlyArray<CheckoutTool> = [
  {
    name: "create_checkout_session",
    description:
      "Create a checkout session from line items, the buyer and fulfillment details (POST /checkout_sessions).",
    method: "POST",
    path: () => "/checkout_sessions",
    takesId: false,
    payload: "required",
    payloadSchema: newest.create.schema
  },
  {
    name: "get_checkout_session",
    description: "Read a checkout session as it is now (GET /checkout_sessions/{id}).",
    method: "GET",
    path: sessionPath,
    takesId: true,
    payload: "none",
    payloadSchema: undefined
  },
  {
    name: "update_checkout_session",
    description: "Change a checkout session's items, buyer, fulfillment or discounts (POST /checkout_sessions/{id}).",
    method: "POST",
    path: sessionPath,
    takesId: true,
    payload: "required",
    payloadSchema: newest.update.schema
  },
  {
    name: "complete_checkout_session",
    description: "Pay for a checkout session with a delegated payment token and create the order " +
      "(POST /checkout_sessions/{id}/complete).",
    method: "POST",
    path: (id) => `${sessionPath(id)}/complete`,
    takesId: true,
    payload: "required",
    payloadSchema: newest.complete.schema
  },
  {
    name: "cancel_checkout_session",
    description: "Cancel a checkout session and release its stock (POST /checkout_sessions/{id}/cancel).",
    method: "POST",
    path: (id) => `${sessionPath(id)}/cancel`,
    takesId: true,
    payload: "optional",
    payloadSchema: newest.cancel?.schema
  }
]

export const toolNamed = (name: string): CheckoutTool | undefined => CHECKOUT_TOOLS.find((tool) => tool.name === name)

/** A JSON object, as a payload must be (its fields are the REST body's, decoded by the REST route). */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const ToolCallParams = Schema.Struct({ name: Schema.String, arguments: optional(JsonObject) })

/** The arguments of `tool`: what the envelope must be before the call is made. */
export const argumentsOf = (tool: CheckoutTool) =>
  Schema.Struct({
    meta: ToolMeta,
    ...(tool.takesId ? { id: StorableString.pipe(Schema.minLength(1)) } : {}),
    ...(tool.payload === "none"
      ? {}
      : tool.payload === "required"
      ? { payload: JsonObject }
      : { payload: optional(JsonObject) })
  })

export interface ToolArguments {
  readonly meta: ToolMeta
  readonly id?: string
  readonly payload?: Record<string, unknown>
}

/** The input schema `tools/list` shows for `tool`: the arguments with the REST body's schema, bundled. */
export const inputSchemaOf = (tool: CheckoutTool): Record<string, unknown> => {
  const payload = tool.payloadSchema
  const fields = {
    meta: ToolMeta,
    ...(tool.takesId ? { id: Schema.String.annotations({ description: "The checkout session id" }) } : {}),
    ...(payload === undefined ? {} : { payload: tool.payload === "required" ? payload : optional(payload) })
  }
  return bundleJsonSchema(JSONSchema.make(Schema.Struct(fields)))
}
