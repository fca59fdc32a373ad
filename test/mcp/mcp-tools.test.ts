/**
 * The checkout tools on /mcp, through the official MCP SDK's client: tools/list schemas (bundled,
 * valid JSON Schema), a whole purchase, every error path with its JSON-RPC code and ACP error, and
 * idempotent replays shared with REST.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Deferred, Effect, Either, Fiber, HashMap, Layer, Logger, Redacted, Schema, TestClock } from "effect"
import { PaymentsLive } from "../../src/app/server.ts"
import { checkoutCodecs } from "../../src/checkout/wire/acp/versions.ts"
import { type ChargeRequest } from "../../src/payments/model/payment.ts"
import { PaymentProvider } from "../../src/payments/payment-provider.ts"
import { ALL_ROLES } from "../../src/platform/config.ts"
import { signRequest } from "../../src/shared/request-signing.ts"
import { amountOf, cardPayment, createRequest, type Json, NOW, updateRequest } from "../support/acp-fixtures.ts"
import { get, post, request, testApp } from "../support/http.ts"
import { callTool, connectMcp } from "../support/mcp-client.ts"
import { delegateCard, PLAIN_CARD } from "../support/three-d-secure.ts"

const VERSION = "2026-04-17"
const run = <A, E>(effect: Effect.Effect<A, E, any>, roles?: ReadonlyArray<string>) =>
  Effect.provide(
    Effect.zipRight(TestClock.setTime(NOW), effect),
    testApp(roles === undefined ? {} : { config: { roles: new Set(roles) as any } })
  ) as Effect.Effect<A, E, never>

let keys = 0
const meta = (extra: Json = {}) => ({ api_version: VERSION, idempotency_key: `mcp_${++keys}_${NOW}`, ...extra })

const TOOL_NAMES = [
  "create_checkout_session",
  "get_checkout_session",
  "update_checkout_session",
  "complete_checkout_session",
  "cancel_checkout_session"
]

/** The session of a tool result: the result's own fields, exactly `structuredContent`. */
const sessionOf = (result: Record<string, any>) => {
  const { content, structuredContent, ...session } = result
  expect(session).toEqual(structuredContent)
  expect(JSON.parse(content[0].text)).toEqual(structuredContent)
  return structuredContent as Json
}

/** A session made ready over MCP and a vt_ token for its total. */
const readyOverMcp = (client: Client) =>
  Effect.gen(function*() {
    const created = yield* callTool(client, "create_checkout_session", {
      meta: meta(),
      payload: createRequest(VERSION)
    })
    const id: string = created.ok ? created.result["id"] : ""
    const ready = yield* callTool(client, "update_checkout_session", {
      meta: meta(),
      id,
      payload: updateRequest(VERSION)
    })
    const total = amountOf(ready.ok ? ready.result["totals"] : [], "total")!
    return { id, token: yield* delegateCard(VERSION, id, PLAIN_CARD, total) }
  })

const strictly = (schema: Schema.Schema.AnyNoContext, value: unknown) =>
  expect(Either.isRight(Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(value))).toBe(true)

describe("MCP checkout tools", () => {
  it.effect("tools/list: the five tools with bundled input schemas that are valid JSON Schema", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES)
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
      for (const tool of tools) {
        expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain("$ref")
        expect(tool.inputSchema.type).toBe("object")
        expect(tool.inputSchema.required).toContain("meta")
        ajv.compile(tool.inputSchema)
      }
      const create = ajv.compile(tools[0]!.inputSchema)
      expect(create({ meta: meta(), payload: createRequest(VERSION) })).toBe(true)
      expect(create({ meta: meta(), payload: { ...createRequest(VERSION), line_items: [] } })).toBe(false)
      expect(create({ payload: createRequest(VERSION) })).toBe(false)
      // `meta` is extensible, as the binding's schema says: a field it does not name is no error.
      expect(create({ meta: { ...meta(), traceparent: "00-abc-def-01" }, payload: createRequest(VERSION) })).toBe(true)
      const metaSchema = (tools[0]!.inputSchema.properties as Record<string, Record<string, any>>)["meta"]!
      expect(metaSchema["additionalProperties"]).toBe(true)
      expect(metaSchema["properties"]["timestamp"]["format"]).toBe("date-time")
      // The objects the protocol leaves open are open here too; the closed ones stay closed.
      const cancel = ajv.compile(tools[4]!.inputSchema)
      const trace = { reason_code: "shipping_cost", agent_note: "from a newer agent" }
      expect(cancel({ meta: meta(), id: "cs_1", payload: { intent_trace: trace, later_field: 1 } })).toBe(true)
      const attributed = { ...createRequest(VERSION), affiliate_attribution: { provider: "p", click_ref: "c1" } }
      expect(create({ meta: meta(), payload: attributed })).toBe(true)
      expect(create({ meta: meta(), payload: { ...createRequest(VERSION), later_field: 1 } })).toBe(false)
    })))

  it.effect("a whole purchase: create → update → delegate a card over REST → complete", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      const created = yield* callTool(client, "create_checkout_session", {
        meta: meta(),
        payload: createRequest(VERSION)
      })
      expect(created.ok).toBe(true)
      const session = sessionOf(created.ok ? created.result : {})
      strictly(checkoutCodecs[VERSION].session.schema, session)
      expect(session.status).toBe("not_ready_for_payment")
      const updated = yield* callTool(client, "update_checkout_session", {
        meta: meta(),
        id: session.id,
        payload: updateRequest(VERSION)
      })
      const ready = sessionOf(updated.ok ? updated.result : {})
      expect(ready.status).toBe("ready_for_payment")
      // The tool's session is the REST session.
      expect((yield* get(`/checkout_sessions/${session.id}`, { version: VERSION })).body).toEqual(ready)
      const token = yield* delegateCard(VERSION, session.id, PLAIN_CARD, amountOf(ready.totals, "total")!)
      const completed = yield* callTool(client, "complete_checkout_session", {
        meta: meta(),
        id: session.id,
        payload: { payment_data: cardPayment(token) }
      })
      const paid = sessionOf(completed.ok ? completed.result : {})
      strictly(checkoutCodecs[VERSION].completeResponse, paid)
      expect(paid.status).toBe("completed")
      expect(paid.order.id).toMatch(/^ord_/)
      const read = yield* callTool(client, "get_checkout_session", { meta: { api_version: VERSION }, id: session.id })
      expect(sessionOf(read.ok ? read.result : {}).status).toBe("completed")
    })))

  it.effect("cancel with and without its optional payload", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      for (const payload of [undefined, { intent_trace: { reason_code: "shipping_cost" } }]) {
        const created = yield* callTool(client, "create_checkout_session", {
          meta: meta(),
          payload: createRequest(VERSION)
        })
        const id = created.ok ? created.result["id"] : ""
        const canceled = yield* callTool(client, "cancel_checkout_session", {
          meta: meta(),
          id,
          ...(payload === undefined ? {} : { payload })
        })
        expect(canceled.ok && canceled.result["status"]).toBe("canceled")
      }
    })))

  describe("errors", () => {
    it.effect("no or a wrong API key: 401 before any MCP message", () =>
      run(Effect.gen(function*() {
        for (const auth of [false, "sk_wrong"] as const) {
          const response = yield* request("POST", "/mcp", {
            auth,
            version: false,
            headers: { accept: "application/json, text/event-stream" },
            body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
          })
          expect(response.status).toBe(401)
          expect(response.body.code).toBe("unauthorized")
          expect(response.headers.get("www-authenticate")).toBe("Bearer")
        }
      })))

    it.effect("an unknown session: -32000 with the ACP error, param $.id", () =>
      run(Effect.gen(function*() {
        const client = yield* connectMcp()
        const missing = yield* callTool(client, "get_checkout_session", {
          meta: { api_version: VERSION },
          id: "cs_nope"
        })
        expect(missing.ok).toBe(false)
        if (missing.ok) return
        expect(missing.error.code).toBe(-32000)
        expect(missing.error.data).toEqual({
          type: "invalid_request",
          code: "not_found",
          message: expect.stringContaining("cs_nope"),
          param: "$.id"
        })
      })))

    it.effect("bad arguments: the envelope is -32602 at its path; the payload -32000 at $.payload…", () =>
      run(Effect.gen(function*() {
        const client = yield* connectMcp()
        const noMeta = yield* callTool(client, "create_checkout_session", { payload: createRequest(VERSION) })
        expect(noMeta.ok || noMeta.error.code).toBe(-32602)
        expect(noMeta.ok || noMeta.error.data).toMatchObject({
          type: "invalid_request",
          code: "missing",
          param: "$.meta"
        })
        const noVersion = yield* callTool(client, "get_checkout_session", { meta: {}, id: "cs_1" })
        expect(noVersion.ok || noVersion.error.data.param).toBe("$.meta.api_version")
        const noId = yield* callTool(client, "get_checkout_session", { meta: { api_version: VERSION } })
        expect(noId.ok || noId.error.data.param).toBe("$.id")
        const unknownTool = yield* callTool(client, "delete_everything", { meta: meta() })
        expect(unknownTool.ok || unknownTool.error.code).toBe(-32602)
        const badPayload = yield* callTool(client, "create_checkout_session", {
          meta: meta(),
          payload: { ...createRequest(VERSION), currency: undefined }
        })
        expect(badPayload.ok || badPayload.error.code).toBe(-32000)
        expect(badPayload.ok || badPayload.error.data).toMatchObject({
          type: "invalid_request",
          code: "missing",
          param: "$.payload.currency"
        })
        const badVersion = yield* callTool(client, "get_checkout_session", {
          meta: { api_version: "2020-01-01" },
          id: "x"
        })
        // A header's error names the field of meta that carries it.
        expect(badVersion.ok || badVersion.error.data).toMatchObject({
          code: "unsupported_api_version",
          param: "$.meta.api_version"
        })
      })))

    it.effect("2026-04-17 writes without meta.idempotency_key are refused as REST refuses them; get needs none", () =>
      run(Effect.gen(function*() {
        const client = yield* connectMcp()
        const keyless = yield* callTool(client, "create_checkout_session", {
          meta: { api_version: VERSION },
          payload: createRequest(VERSION)
        })
        expect(keyless.ok || keyless.error.code).toBe(-32000)
        expect(keyless.ok || keyless.error.data).toMatchObject({
          code: "idempotency_key_required",
          param: "$.meta.idempotency_key"
        })
        // 2026-01-30 has no such rule: the write goes through without replay protection.
        const older = yield* callTool(client, "create_checkout_session", {
          meta: { api_version: "2026-01-30" },
          payload: createRequest("2026-01-30")
        })
        expect(older.ok).toBe(true)
      })))

    it.effect("a key reused with another payload: -32000 idempotency_conflict", () =>
      run(Effect.gen(function*() {
        const client = yield* connectMcp()
        const key = meta()
        yield* callTool(client, "create_checkout_session", { meta: key, payload: createRequest(VERSION) })
        const other = yield* callTool(client, "create_checkout_session", {
          meta: key,
          payload: createRequest(VERSION, { line_items: [{ id: "mug-ceramic", quantity: 3 }] })
        })
        expect(other.ok || other.error.code).toBe(-32000)
        expect(other.ok || other.error.data.code).toBe("idempotency_conflict")
      })))

    it.effect("a conflict of state: completing a completed session is -32000 session_completed", () =>
      run(Effect.gen(function*() {
        const client = yield* connectMcp()
        const { id, token } = yield* readyOverMcp(client)
        const payload = { payment_data: cardPayment(token) }
        yield* callTool(client, "complete_checkout_session", { meta: meta(), id, payload })
        const again = yield* callTool(client, "complete_checkout_session", { meta: meta(), id, payload })
        expect(again.ok || again.error.code).toBe(-32000)
        expect(again.ok || again.error.data.code).toBe("session_completed")
      })))
  })

  it.effect("a call whose twin with the same key is still running: -32000 idempotency_in_flight", () => {
    const entered = Effect.runSync(Deferred.make<void>())
    const gate = Effect.runSync(Deferred.make<void>())
    const slowCharges = Layer.effect(
      PaymentProvider,
      Effect.map(PaymentProvider, (builtIn) => ({
        ...builtIn,
        charge: (charge: ChargeRequest) =>
          Effect.zipRight(
            Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(gate)),
            builtIn.charge(charge)
          )
      }))
    ).pipe(Layer.provide(PaymentsLive))
    return Effect.provide(
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const client = yield* connectMcp()
        const { id, token } = yield* readyOverMcp(client)
        const args = { meta: meta(), id, payload: { payment_data: cardPayment(token) } }
        const first = yield* Effect.fork(callTool(client, "complete_checkout_session", args))
        yield* Deferred.await(entered)
        const twin = yield* callTool(client, "complete_checkout_session", args)
        expect(twin.ok || twin.error.code).toBe(-32000)
        expect(twin.ok || twin.error.data.code).toBe("idempotency_in_flight")
        yield* Deferred.succeed(gate, undefined)
        const done = yield* Fiber.join(first)
        expect(done.ok && done.result["status"]).toBe("completed")
      }),
      testApp({ payments: slowCharges })
    )
  })

  it.effect("the REST rate limits hold: rejected discount codes run out the same budget", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      const created = yield* callTool(client, "create_checkout_session", {
        meta: meta(),
        payload: createRequest(VERSION)
      })
      const id = created.ok ? created.result["id"] : ""
      let limited: { ok: boolean; error?: any } | undefined
      for (let attempt = 0; attempt < 25 && limited === undefined; attempt++) {
        const answer = yield* callTool(client, "update_checkout_session", {
          meta: meta(),
          id,
          payload: { discounts: { codes: [`NOPE${attempt}`] } }
        })
        if (!answer.ok) limited = answer
      }
      expect(limited?.error.code).toBe(-32000)
      expect(limited?.error.data).toMatchObject({ code: "too_many_requests", param: "$.payload.discounts.codes" })
    })))

  it.effect("request signing: meta.signature over the payload as JSON, or -32000 invalid_signature", () =>
    Effect.provide(
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const client = yield* connectMcp()
        const payload = createRequest(VERSION)
        const timestamp = new Date(NOW).toISOString()
        const signed = yield* callTool(client, "create_checkout_session", {
          meta: meta({ timestamp, signature: signRequest("mcp_secret", timestamp, JSON.stringify(payload)) }),
          payload
        })
        expect(signed.ok).toBe(true)
        const unsigned = yield* callTool(client, "create_checkout_session", { meta: meta(), payload })
        expect(unsigned.ok || unsigned.error.data.code).toBe("invalid_signature")
      }),
      testApp({ config: { requestSigningSecrets: [Redacted.make("mcp_secret")] } })
    ))

  it.effect("each tool call is logged as its REST call, under meta.request_id", () => {
    const lines: Array<string> = []
    const logger = Logger.make(({ annotations, message }) =>
      void lines.push(`${String(message)} ${JSON.stringify(Object.fromEntries(HashMap.toEntries(annotations)))}`)
    )
    return run(
      Effect.gen(function*() {
        const client = yield* connectMcp()
        const created = yield* callTool(client, "create_checkout_session", {
          meta: meta({ request_id: "req_from_the_agent_42" }),
          payload: createRequest(VERSION)
        })
        expect(created.ok).toBe(true)
        expect(lines).toContainEqual(
          expect.stringMatching(/^POST \/checkout_sessions 201 \d+ms .*"request_id":"req_from_the_agent_42"/)
        )
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    )
  })

  it.effect("a tool call and the REST call with one key are one request: each replays the other", () =>
    run(Effect.gen(function*() {
      const client = yield* connectMcp()
      const key = meta()
      const first = yield* callTool(client, "create_checkout_session", { meta: key, payload: createRequest(VERSION) })
      const session = sessionOf(first.ok ? first.result : {})
      const replayed = yield* callTool(client, "create_checkout_session", {
        meta: key,
        payload: createRequest(VERSION)
      })
      expect(sessionOf(replayed.ok ? replayed.result : {})).toEqual(session)
      const rest = yield* post("/checkout_sessions", createRequest(VERSION), {
        version: VERSION,
        headers: { "idempotency-key": key.idempotency_key }
      })
      expect(rest.status).toBe(201)
      expect(rest.headers.get("idempotent-replayed")).toBe("true")
      expect(rest.body).toEqual(session)
    })))

  it.effect("role mcp: /mcp is there only when it is on, and discovery lists the transport", () =>
    Effect.gen(function*() {
      const on = yield* run(get("/.well-known/acp.json", { auth: false, version: false }))
      expect(on.body.transports).toEqual(["rest", "mcp"])
      const withoutMcp = ALL_ROLES.filter((role) => role !== "mcp")
      const off = yield* run(
        Effect.gen(function*() {
          const discovery = yield* get("/.well-known/acp.json", { auth: false, version: false })
          const mcp = yield* request("POST", "/mcp", {
            version: false,
            body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
          })
          return { discovery, mcp }
        }),
        withoutMcp
      )
      expect(off.discovery.body.transports).toEqual(["rest"])
      expect(off.mcp.status).toBe(404)
    }))
})
