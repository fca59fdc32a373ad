/**
 * Headers of the pages people open in a browser (the buyer's order page, the merchant console):
 * the page's Content-Security-Policy, never cached or indexed, no referrer sent on (their URLs may
 * be capabilities), and no content sniffing.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

export const withPageHeaders = (contentSecurityPolicy: string) => (response: HttpServerResponse.HttpServerResponse) =>
  response.pipe(
    HttpServerResponse.setHeader("content-security-policy", contentSecurityPolicy),
    HttpServerResponse.setHeader("cache-control", "no-store"),
    HttpServerResponse.setHeader("referrer-policy", "no-referrer"),
    HttpServerResponse.setHeader("x-robots-tag", "noindex"),
    HttpServerResponse.setHeader("x-content-type-options", "nosniff")
  )
