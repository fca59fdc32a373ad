/** Headers of the pages a browser opens: its CSP, no caching or indexing, no referrer (URLs may be capabilities). */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

export const withPageHeaders = (contentSecurityPolicy: string) => (response: HttpServerResponse.HttpServerResponse) =>
  response.pipe(
    HttpServerResponse.setHeader("content-security-policy", contentSecurityPolicy),
    HttpServerResponse.setHeader("cache-control", "no-store"),
    HttpServerResponse.setHeader("referrer-policy", "no-referrer"),
    HttpServerResponse.setHeader("x-robots-tag", "noindex"),
    HttpServerResponse.setHeader("x-content-type-options", "nosniff")
  )
