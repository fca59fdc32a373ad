/**
 * Idempotency follows the groups' declarations, not their paths: a group annotated `Idempotent`
 * gets it wherever its routes live, one without does not, `ErrorFamily` picks the error object,
 * and the header checks are the middlewares the group declares.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { idempotentRoutes } from "../../src/idempotency/http/middleware.ts"
import { API_ID, withSharedErrors } from "../../src/platform/http/feature-api.ts"
import { RequestSignature, RequestSignatureLive } from "../../src/platform/http/request-signature.ts"
import { ErrorFamily, Idempotent } from "../../src/platform/http/route-declarations.ts"
import { AgentAuthorization, ApiVersion, ApiVersionLive, AuthorizationLive } from "../../src/platform/http/security.ts"
import { signRequest } from "../../src/shared/request-signing.ts"
import { serveIdempotentApi } from "../support/idempotent-test-api.ts"

const Count = Schema.Struct({ count: Schema.Number })
const bump = <const Path extends `/${string}`>(path: Path) => HttpApiEndpoint.post("bump", path).addSuccess(Count)

class Declared extends HttpApiGroup.make("declared")
  .add(bump("/anywhere/at/all"))
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
{}

class Undeclared extends HttpApiGroup.make("undeclared")
  .add(bump("/checkout_sessions_lookalike"))
  .middleware(ApiVersion)
  .middleware(AgentAuthorization)
{}

class DelegateFamily extends HttpApiGroup.make("delegateFamily")
  .add(bump("/vault/things"))
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
  .annotate(ErrorFamily, "delegate")
{}

class Signed extends HttpApiGroup.make("signed")
  .add(bump("/signed/things"))
  .middleware(RequestSignature)
  .middleware(AgentAuthorization)
  .annotate(Idempotent, true)
{}

const TestApi = withSharedErrors(HttpApi.make(API_ID).add(Declared).add(Undeclared).add(DelegateFamily).add(Signed))

const SIGNING_SECRET = "sig_test_secret"

/** The test API served with the idempotency middleware; `runs` counts each route's executions. */
const serve = Effect.gen(function*() {
  const runs: Record<string, number> = { declared: 0, undeclared: 0, delegateFamily: 0, signed: 0 }
  const count = (group: string) => Effect.sync(() => ({ count: ++runs[group]! }))
  const ApiLive = HttpApiBuilder.api(TestApi).pipe(
    Layer.provide([
      HttpApiBuilder.group(TestApi, "declared", (handlers) => handlers.handle("bump", () => count("declared"))),
      HttpApiBuilder.group(TestApi, "undeclared", (handlers) => handlers.handle("bump", () => count("undeclared"))),
      HttpApiBuilder.group(
        TestApi,
        "delegateFamily",
        (handlers) => handlers.handle("bump", () => count("delegateFamily"))
      ),
      HttpApiBuilder.group(TestApi, "signed", (handlers) => handlers.handle("bump", () => count("signed")))
    ]),
    Layer.provide([AuthorizationLive, ApiVersionLive, RequestSignatureLive])
  )
  const served = yield* serveIdempotentApi(TestApi, ApiLive, {
    config: { requestSigningSecrets: [Redacted.make(SIGNING_SECRET)] }
  })
  const post = (path: string, key: string, headers: Record<string, string> = {}) => served.post(path, { key, headers })
  return { post, runs }
})

describe("idempotency by declaration", () => {
  it.scoped("a group declared Idempotent gets it, whatever its path", () =>
    Effect.gen(function*() {
      const { post, runs } = yield* serve
      const first = yield* post("/anywhere/at/all", "k-1")
      const again = yield* post("/anywhere/at/all", "k-1")
      expect([first.status, first.replayed, again.status, again.replayed]).toEqual([200, false, 200, true])
      expect(again.body).toEqual({ count: 1 })
      expect(runs.declared).toBe(1)
    }))

  it.scoped("a group without the declaration does not, whatever its path", () =>
    Effect.gen(function*() {
      const { post, runs } = yield* serve
      const first = yield* post("/checkout_sessions_lookalike", "k-1")
      const again = yield* post("/checkout_sessions_lookalike", "k-1")
      expect([first.replayed, again.replayed]).toEqual([false, false])
      expect(again.body).toEqual({ count: 2 })
      expect(runs.undeclared).toBe(2)
      expect(idempotentRoutes(TestApi)("/checkout_sessions_lookalike")).toBeUndefined()
    }))

  it.scoped("the declared error family answers", () =>
    Effect.gen(function*() {
      const { post } = yield* serve
      const checkoutFamily = yield* post("/anywhere/at/all", "has space")
      expect([checkoutFamily.status, checkoutFamily.body.code]).toEqual([400, "invalid"])
      const delegateFamily = yield* post("/vault/things", "has space")
      expect([delegateFamily.status, delegateFamily.body.code]).toEqual([400, "invalid_card"])
    }))

  it.scoped("the header checks are the ones the group declares", () =>
    Effect.gen(function*() {
      const { post, runs } = yield* serve
      // Declares no ApiVersion: an unsupported version is no reason to pass the request on unclaimed.
      yield* post("/vault/things", "v-1", { "api-version": "1999-01-01" })
      expect((yield* post("/vault/things", "v-1", { "api-version": "1999-01-01" })).replayed).toBe(true)
      expect(runs.delegateFamily).toBe(1)
      // Declares ApiVersion: the route refuses it, and nothing is stored.
      const refused = yield* post("/anywhere/at/all", "v-2", { "api-version": "1999-01-01" })
      expect([refused.status, refused.body.code]).toEqual([400, "unsupported_api_version"])
      expect((yield* post("/anywhere/at/all", "v-2")).replayed).toBe(false)
      // Declares RequestSignature: unsigned requests go to the route (401) and are never stored.
      const unsigned = yield* post("/signed/things", "s-1")
      expect([unsigned.status, unsigned.body.code]).toEqual([401, "invalid_signature"])
      const timestamp = "0"
      const signed = { timestamp, signature: signRequest(SIGNING_SECRET, timestamp, "{}") }
      expect((yield* post("/signed/things", "s-1", signed)).replayed).toBe(false)
      expect((yield* post("/signed/things", "s-1", signed)).replayed).toBe(true)
      expect(runs.signed).toBe(1)
    }))

  it("an Idempotent group must authenticate: its keys are scoped to the API key", () => {
    class Open extends HttpApiGroup.make("open").add(bump("/open")).annotate(Idempotent, true) {}
    expect(() => idempotentRoutes(HttpApi.make(API_ID).add(Open))).toThrow(
      "open is declared Idempotent but declares neither AgentAuthorization nor MerchantAuthorization"
    )
  })
})
