/** How console handlers answer: secured pages, a redirect after a form (a reload never posts again), refusals. */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { withPageHeaders } from "../../platform/http/page-headers.ts"
import { html } from "../../shared/html.ts"
import { CONSOLE_PATH } from "./cookies.ts"
import { CONSOLE_CONTENT_SECURITY_POLICY, consoleDocument, type Frame } from "./layout.ts"

/** Every console answer: no script or framing, never cached, never indexed, no referrer to other sites. */
export const secured = (response: HttpServerResponse.HttpServerResponse) =>
  withPageHeaders(CONSOLE_CONTENT_SECURITY_POLICY)(response).pipe(
    HttpServerResponse.setHeader("x-frame-options", "DENY")
  )

export const pageResponse = (frame: Frame, content: ReturnType<typeof html>, status = 200) =>
  secured(HttpServerResponse.html(consoleDocument(frame, content)).pipe(HttpServerResponse.setStatus(status)))

export const redirect = (location: string) =>
  secured(HttpServerResponse.empty({ status: 303 }).pipe(HttpServerResponse.setHeader("location", location)))

const plainFrame = (title: string): Frame => ({ title, pages: [] })

/** A form posted without a session, without its token, or from another site. Nothing was done. */
export const forgedForm = () =>
  pageResponse(
    plainFrame("Form refused"),
    html`<p class="problem" role="alert">This form was not sent from a page of your console session, so nothing was done.</p>
<p><a href="${CONSOLE_PATH}">Open the console</a> and try again.</p>`,
    403
  )

export const unreadableForm = () =>
  pageResponse(
    plainFrame("Form refused"),
    html`<p class="problem" role="alert">The form could not be read, so nothing was done.</p>
<p><a href="${CONSOLE_PATH}">Back to the console</a></p>`,
    400
  )

export const notFoundPage = (frame: Frame, what: string) => pageResponse(frame, html`<p>${what}</p>`, 404)

/** Storage is unreachable: nothing shown or done; the browser may retry shortly. */
export const unavailablePage = () =>
  pageResponse(
    plainFrame("Try again shortly"),
    html`<p class="problem" role="alert">The console cannot reach its storage right now; nothing was changed. Try again shortly.</p>`,
    503
  ).pipe(HttpServerResponse.setHeader("retry-after", "2"))
