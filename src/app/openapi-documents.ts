/**
 * The API's documentation routes: one OpenAPI document per accepted ACP version at
 * `/openapi/<version>.json` (`apiFor(version)`: what a request of that version sends and gets),
 * `/openapi.json` the newest accepted one, and Swagger UI at `/docs` with a selector of them. A
 * version that is not accepted (`API_VERSIONS`) has no document: its path is not found.
 * The documents are generated once, at start; the page on its first request, because Swagger UI's
 * bundle is megabytes of text a server that nobody asks for its docs should not hold.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"
import { AppConfig } from "../platform/config.ts"
import type { ExtraRoute } from "../platform/http/route-table.ts"
import type { ApiVersionName } from "../shared/api-versions.ts"
import { apiFor } from "./api.ts"
import { docsPage } from "./docs-page.ts"

export const openApiPath = (version: ApiVersionName) => `/openapi/${version}.json` as const

/** Newest first: the newest is `/openapi.json` and the one `/docs` opens with. */
const newestFirst = (versions: ReadonlyArray<ApiVersionName>) => [...versions].sort().reverse()

/** The routes served here, for the request middleware's 404/405 answers. */
export const documentationRoutes = (versions: ReadonlyArray<ApiVersionName>): ReadonlyArray<ExtraRoute> =>
  ["/openapi.json", "/docs", ...versions.map(openApiPath)].map((path) => ({ method: "GET", path }))

export const DocumentationRoutesLive = HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
  const versions = newestFirst((yield* AppConfig).apiVersions)
  for (const version of versions) {
    const document = HttpServerResponse.unsafeJson(OpenApi.fromApi(apiFor(version)))
    yield* router.get(openApiPath(version), Effect.succeed(document))
    if (version === versions[0]) yield* router.get("/openapi.json", Effect.succeed(document))
  }
  const page = yield* Effect.cached(Effect.sync(() =>
    HttpServerResponse.html(
      docsPage(
        "Agentic Checkout Service Documentation",
        // Relative to `/docs`, so the page keeps working behind a path prefix.
        versions.map((version) => ({ name: `ACP ${version}`, url: openApiPath(version).slice(1) }))
      )
    )
  ))
  yield* router.get("/docs", page)
}))
