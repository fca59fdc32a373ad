/**
 * An OpenAPI document per accepted version at `/openapi/<version>.json`, the newest also at `/openapi.json`,
 * and Swagger UI at `/docs`, made on its first request: a server nobody asks for docs need not hold it.
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
        versions.map((version) => ({ name: `ACP ${version}`, url: openApiPath(version).slice(1) }))
      )
    )
  ))
  yield* router.get("/docs", page)
}))
