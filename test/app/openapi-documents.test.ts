/**
 * The documentation routes: one OpenAPI 3.1 document per accepted version at
 * `/openapi/<version>.json`, `/openapi.json` the newest accepted, and `/docs` (Swagger UI) offering
 * every one of them; a version that is not accepted has no document.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { API_VERSION_NAMES, type ApiVersionName } from "../../src/shared/api-versions.ts"
import { get, request, testApp, type TestAppOptions } from "../support/http.ts"

const run = <A, E>(effect: Effect.Effect<A, E, any>, options: TestAppOptions = {}) =>
  Effect.provide(effect, testApp(options)) as Effect.Effect<A, E, never>

const open = { auth: false, version: false } as const

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/** The value at a local JSON pointer (`#/components/schemas/X`), or undefined. */
const resolvePointer = (document: unknown, ref: string): unknown =>
  ref.slice(2).split("/").map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~")).reduce<any>(
    (node, key) => (node !== null && typeof node === "object" ? node[key] : undefined),
    document
  )

const refsIn = (node: unknown, found: Array<string> = []): Array<string> => {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, found))
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.push(value)
      else refsIn(value, found)
    }
  }
  return found
}

/** The shape OpenAPI 3.1 requires of what we use: info, operations with responses, path parameters, local refs. */
const expectStructurallyValid = (document: any) => {
  expect(document.openapi).toMatch(/^3\.1\.\d+$/)
  expect(typeof document.info.title).toBe("string")
  expect(typeof document.info.version).toBe("string")
  const operationIds: Array<string> = []
  for (const [path, item] of Object.entries<any>(document.paths)) {
    expect(path.startsWith("/")).toBe(true)
    for (const [method, operation] of Object.entries<any>(item)) {
      expect(METHODS).toContain(method)
      expect(Object.keys(operation.responses).length).toBeGreaterThan(0)
      operationIds.push(operation.operationId)
      const pathParameters = (operation.parameters ?? []).filter((p: any) => p.in === "path")
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        expect(pathParameters.find((p: any) => p.name === name), `${method} ${path} {${name}}`).toMatchObject({
          required: true
        })
      }
    }
  }
  expect(new Set(operationIds).size).toBe(operationIds.length)
  const refs = refsIn(document)
  expect(refs.length).toBeGreaterThan(0)
  for (const ref of new Set(refs)) {
    expect(ref.startsWith("#/"), ref).toBe(true)
    expect(resolvePointer(document, ref), ref).toBeDefined()
  }
}

const ACP_PATHS = [
  "/checkout_sessions",
  "/checkout_sessions/{checkout_session_id}",
  "/checkout_sessions/{checkout_session_id}/complete",
  "/checkout_sessions/{checkout_session_id}/cancel",
  "/agentic_commerce/delegate_payment"
]

const headerParameter = (operation: any, name: string) =>
  (operation.parameters ?? []).find((p: any) => p.in === "header" && p.name.toLowerCase() === name)

/** The operations of a document, with their path and method. */
const operationsOf = (document: any) =>
  Object.entries<any>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, operation]) => ({ path, method, operation }))
  )

const docsDocuments = (html: string): Array<{ name: string; url: string }> =>
  JSON.parse(/<script id="swagger-documents" type="application\/json">([^<]*)<\/script>/.exec(html)![1]!)

describe("OpenAPI documents", () => {
  for (const version of API_VERSION_NAMES) {
    it.effect(`/openapi/${version}.json: valid OpenAPI 3.1 of that version`, () =>
      run(Effect.gen(function*() {
        const response = yield* get(`/openapi/${version}.json`, open)
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("application/json")
        const document = response.body
        expectStructurallyValid(document)
        expect(document.info.version).toBe(version)
        expect(document.info.title).toContain(version)
        expect(document.info.description).toContain(`API-Version: ${version}`)
        for (const path of ACP_PATHS) expect(Object.keys(document.paths)).toContain(path)
        // API-Version takes exactly this version wherever it is declared.
        const versioned = operationsOf(document).filter(({ operation }) => headerParameter(operation, "api-version"))
        expect(versioned.length).toBeGreaterThan(0)
        for (const { operation } of versioned) {
          expect(headerParameter(operation, "api-version").schema.enum).toEqual([version])
        }
      })))
  }

  it.effect("each document has its own version's bodies (2025-09-29 items, 2026 line_items)", () =>
    run(Effect.gen(function*() {
      const createFields = (document: any) => {
        const body = document.paths["/checkout_sessions"].post.requestBody.content["application/json"].schema
        return Object.keys((body.$ref === undefined ? body : resolvePointer(document, body.$ref) as any).properties)
      }
      const oldest = createFields((yield* get("/openapi/2025-09-29.json", open)).body)
      expect(oldest).toContain("items")
      expect(oldest).not.toContain("line_items")
      for (const version of ["2026-01-30", "2026-04-17"]) {
        const fields = createFields((yield* get(`/openapi/${version}.json`, open)).body)
        expect(fields, version).toContain("line_items")
        expect(fields, version).not.toContain("items")
      }
    })))

  it.effect("the Delegate Authentication API is in 2026-04-17's document only", () =>
    run(Effect.gen(function*() {
      const authenticationPaths = (document: any) =>
        Object.keys(document.paths).filter((path) => path.startsWith("/delegate_authentication"))
      expect(authenticationPaths((yield* get("/openapi/2026-04-17.json", open)).body)).toEqual(
        expect.arrayContaining(["/delegate_authentication", "/delegate_authentication/{authentication_session_id}"])
      )
      for (const older of ["2025-09-29", "2026-01-30"] as const) {
        expect(authenticationPaths((yield* get(`/openapi/${older}.json`, open)).body), older).toEqual([])
      }
    })))

  it.effect("the Cart API is in 2026-04-17's document only, with its four operations; the buyer page in none", () =>
    run(Effect.gen(function*() {
      const cartOperations = (document: any) =>
        operationsOf(document).filter(({ path }) =>
          path === "/carts" || path.startsWith("/carts/") || path.startsWith("/cart/")
        )
          .map(({ method, path }) => `${method} ${path}`).sort()
      const newest = (yield* get("/openapi/2026-04-17.json", open)).body
      expect(cartOperations(newest)).toEqual([
        "get /carts/{id}",
        "post /carts",
        "post /carts/{id}/cancel",
        "put /carts/{id}"
      ])
      expect(Object.keys(newest.paths["/carts"].post.responses).sort()).toEqual(
        expect.arrayContaining(["201", "400", "401", "403", "422"])
      )
      expect(newest.tags.map((tag: { name: string }) => tag.name)).toContain("carts")
      for (const older of ["2025-09-29", "2026-01-30"] as const) {
        const document = (yield* get(`/openapi/${older}.json`, open)).body
        expect(cartOperations(document), older).toEqual([])
        expect(document.tags.map((tag: { name: string }) => tag.name), older).not.toContain("carts")
      }
    })))

  it.effect("complete answers the completed session, or in 2026 versions the session waiting for 3-D Secure", () =>
    run(Effect.gen(function*() {
      const completeSchemas = (document: any) => {
        const schema = document.paths["/checkout_sessions/{checkout_session_id}/complete"].post.responses["200"]
          .content["application/json"].schema
        return JSON.stringify(schema)
      }
      expect(completeSchemas((yield* get("/openapi/2025-09-29.json", open)).body)).not.toContain(
        "CheckoutSessionAuthenticationRequired"
      )
      for (const version of ["2026-01-30", "2026-04-17"] as const) {
        expect(completeSchemas((yield* get(`/openapi/${version}.json`, open)).body), version).toContain(
          "CheckoutSessionAuthenticationRequired"
        )
      }
    })))

  it.effect("request_not_idempotent is an error type of 2025-09-29 and 2026-01-30, not of 2026-04-17", () =>
    run(Effect.gen(function*() {
      const errorTypes = (document: any) =>
        new Set(
          Object.values<any>(document.components.schemas)
            .flatMap((schema) => schema?.properties?.type?.enum ?? [])
            .filter((value: unknown) => typeof value === "string")
        )
      const newest = errorTypes((yield* get("/openapi/2026-04-17.json", open)).body)
      expect(newest.has("invalid_request")).toBe(true)
      expect(newest.has("request_not_idempotent")).toBe(false)
      for (const older of ["2025-09-29", "2026-01-30"] as const) {
        expect(errorTypes((yield* get(`/openapi/${older}.json`, open)).body).has("request_not_idempotent"), older)
          .toBe(true)
      }
    })))

  it.effect("Idempotency-Key is required on the checkout, delegate and cart POSTs (and PUT) of 2026-04-17 only", () =>
    run(Effect.gen(function*() {
      const required = (document: any) =>
        operationsOf(document)
          .filter(({ operation }) => headerParameter(operation, "idempotency-key")?.required === true)
          .map(({ method, path }) => `${method} ${path}`)
          .sort()
      const newest = (yield* get("/openapi/2026-04-17.json", open)).body
      expect(required(newest)).toEqual([
        "post /agentic_commerce/delegate_payment",
        "post /carts",
        "post /carts/{id}/cancel",
        "post /checkout_sessions",
        "post /checkout_sessions/{checkout_session_id}",
        "post /checkout_sessions/{checkout_session_id}/cancel",
        "post /checkout_sessions/{checkout_session_id}/complete",
        "put /carts/{id}"
      ].sort())
      const create = newest.paths["/checkout_sessions"].post
      expect(headerParameter(create, "idempotency-key").description).toContain("idempotency_key_required")
      // Still documented as echoed and replayable.
      expect(Object.keys(create.responses["201"].headers)).toContain("Idempotent-Replayed")
      for (const older of ["2025-09-29", "2026-01-30"] as const) {
        const document = (yield* get(`/openapi/${older}.json`, open)).body
        expect(required(document), older).toEqual([])
        expect(headerParameter(document.paths["/checkout_sessions"].post, "idempotency-key")).toMatchObject({
          required: false
        })
      }
    })))

  it.effect("each operation names the kind of key it takes: agentKey, merchantKey, or none; 403 for the other", () =>
    run(Effect.gen(function*() {
      for (const version of API_VERSION_NAMES) {
        const document = (yield* get(`/openapi/${version}.json`, open)).body
        expect(document.components.securitySchemes, version).toEqual({
          agentKey: expect.objectContaining({
            type: "http",
            scheme: "bearer",
            description: expect.stringContaining("API_KEYS")
          }),
          merchantKey: expect.objectContaining({
            type: "http",
            scheme: "bearer",
            description: expect.stringContaining("MERCHANT_API_KEYS")
          })
        })
        for (const { method, operation, path } of operationsOf(document)) {
          const at = `${version} ${method} ${path}`
          const merchant = /^\/(orders|products|feed-publication|webhooks\/(deliveries|metrics))(\/|$)/.test(path)
          const keyless = path === "/agentic_checkout/webhooks/order_events" || path === "/stripe/webhooks" ||
            path.includes("/acs/") ||
            /^\/(healthz|readyz|\.well-known\/acp\.json|order-status\/)/.test(path)
          const expected = keyless ? [] : [{ [merchant ? "merchantKey" : "agentKey"]: [] }]
          expect(operation.security, at).toEqual(expected)
          if (!keyless) expect(Object.keys(operation.responses), at).toEqual(expect.arrayContaining(["401", "403"]))
        }
      }
    })))

  it.effect("/openapi.json is the newest accepted version's document", () =>
    run(Effect.gen(function*() {
      const latest = yield* get("/openapi.json", open)
      expect(latest.status).toBe(200)
      expect(latest.body).toEqual((yield* get("/openapi/2026-04-17.json", open)).body)
    })))

  it.effect("only accepted versions have a document; /openapi.json follows API_VERSIONS", () =>
    run(
      Effect.gen(function*() {
        expect((yield* get("/openapi.json", open)).body.info.version).toBe("2026-01-30")
        expect((yield* get("/openapi/2026-01-30.json", open)).status).toBe(200)
        expect((yield* get("/openapi/2025-09-29.json", open)).status).toBe(200)
        for (const path of ["/openapi/2026-04-17.json", "/openapi/2025-12-12.json", "/openapi/latest.json"]) {
          const missing = yield* get(path, open)
          expect(missing.status, path).toBe(404)
          expect(missing.body).toMatchObject({ type: "invalid_request", code: "not_found" })
        }
        const wrongMethod = yield* request("POST", "/openapi/2026-01-30.json", open)
        expect(wrongMethod.status).toBe(405)
        expect(wrongMethod.headers.get("allow")).toBe("GET")
      }),
      { config: { apiVersions: ["2026-01-30", "2025-09-29"] } }
    ))

  it.effect("/docs: Swagger UI offering every accepted version, newest first, self-contained", () =>
    run(Effect.gen(function*() {
      const docs = yield* get("/docs", open)
      expect(docs.status).toBe(200)
      expect(docs.headers.get("content-type")).toContain("text/html")
      const documents = docsDocuments(docs.text)
      expect(documents).toEqual([
        { name: "ACP 2026-04-17", url: "openapi/2026-04-17.json" },
        { name: "ACP 2026-01-30", url: "openapi/2026-01-30.json" },
        { name: "ACP 2025-09-29", url: "openapi/2025-09-29.json" }
      ])
      // Each entry is served (relative to /docs).
      for (const { url } of documents) expect((yield* get(`/${url}`, open)).status).toBe(200)
      // Swagger UI and its selector are in the page; nothing is loaded from elsewhere.
      expect(docs.text).toContain("SwaggerUIBundle({")
      expect(docs.text).toContain("layout: \"StandaloneLayout\"")
      expect(docs.text).toContain("validatorUrl: null")
      expect(docs.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/)
    })))

  it.effect("/docs lists only the accepted versions", () =>
    run(
      Effect.gen(function*() {
        const names = docsDocuments((yield* get("/docs", open)).text).map(({ name }) => name)
        expect(names).toEqual(["ACP 2026-04-17", "ACP 2025-09-29"])
      }),
      { config: { apiVersions: ["2026-04-17", "2025-09-29"] as ReadonlyArray<ApiVersionName> } }
    ))
})
