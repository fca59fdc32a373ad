/**
 * The frame of every console page: navigation (the pages of the roles switched on), sign-out, a notice.
 * No script, every value escaped by `html`; the one inline style sheet is allowed by its hash.
 */
import { createHash } from "node:crypto"
import { Html, html } from "../../shared/html.ts"
import { CONSOLE_PATH } from "./cookies.ts"

/** A page of the console and the roles (any of them) it needs. */
export interface ConsolePage {
  readonly path: string
  readonly label: string
  readonly roles: ReadonlyArray<string>
}

export const CONSOLE_PAGES: ReadonlyArray<ConsolePage> = [
  { path: `${CONSOLE_PATH}/orders`, label: "Orders", roles: ["checkout"] },
  { path: `${CONSOLE_PATH}/sessions`, label: "Checkout sessions", roles: ["checkout"] },
  { path: `${CONSOLE_PATH}/carts`, label: "Carts", roles: ["checkout"] },
  { path: `${CONSOLE_PATH}/products`, label: "Products", roles: ["checkout"] },
  { path: `${CONSOLE_PATH}/stock`, label: "Stock", roles: ["checkout"] },
  { path: `${CONSOLE_PATH}/feed`, label: "Product feed", roles: ["checkout"] },
  { path: `${CONSOLE_PATH}/deliveries`, label: "Deliveries", roles: ["checkout", "webhook_sender"] },
  { path: `${CONSOLE_PATH}/received`, label: "Received events", roles: ["webhook_receiver"] }
]

export const pagesFor = (roles: ReadonlySet<string>): ReadonlyArray<ConsolePage> =>
  CONSOLE_PAGES.filter((page) => page.roles.some((role) => roles.has(role)))

const STYLE = "body{font-family:system-ui,sans-serif;margin:0;color:#1a1a1a;line-height:1.45}" +
  "header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.6rem 1rem;background:#1f2937;color:#fff}" +
  "header a{color:#fff}header nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}" +
  "header form{margin-left:auto}main{max-width:72rem;margin:0 auto;padding:1rem}" +
  "table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{text-align:left;padding:.3rem .5rem;" +
  "border-bottom:1px solid #ddd;vertical-align:top}td.n,th.n{text-align:right}" +
  "form.inline{display:inline}fieldset{margin:.5rem 0;border:1px solid #ccc}label{margin-right:.5rem}" +
  "input,select,button{font:inherit;margin:.15rem .25rem .15rem 0}" +
  ".notice{padding:.5rem .75rem;background:#e6f4ea;border-left:4px solid #1e8e3e}" +
  ".problem{padding:.5rem .75rem;background:#fce8e6;border-left:4px solid #d93025}" +
  ".status{display:inline-block;padding:0 .5rem;border-radius:1rem;background:#e8f0fe}" +
  "@media (max-width:40rem){th.opt,td.opt{display:none}}"

export const CONSOLE_CONTENT_SECURITY_POLICY = "default-src 'none'; " +
  `style-src 'sha256-${createHash("sha256").update(STYLE, "utf8").digest("base64")}'; ` +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

/** A message shown above the content: what an action did, or why it did not. */
export interface Notice {
  readonly kind: "notice" | "problem"
  readonly text: string
}

export interface Frame {
  readonly title: string
  /** The pages to link (none before sign-in). */
  readonly pages: ReadonlyArray<ConsolePage>
  /** The session's CSRF token, for the sign-out form; absent before sign-in. */
  readonly csrfToken?: string | undefined
  readonly notice?: Notice | undefined
}

export const csrfField = (token: string): Html => html`<input type="hidden" name="csrf_token" value="${token}">`

export const consoleDocument = (frame: Frame, content: Html): string =>
  html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${frame.title} · Merchant console</title>
<style>${new Html(STYLE)}</style></head><body><header><strong>Merchant console</strong>${
    frame.pages.length > 0 &&
    html`<nav aria-label="Console"><ul>${
      frame.pages.map((page) => html`<li><a href="${page.path}">${page.label}</a></li>`)
    }</ul></nav>`
  }${
    frame.csrfToken !== undefined &&
    html`<form method="post" action="${CONSOLE_PATH}/sign-out">${
      csrfField(frame.csrfToken)
    }<button type="submit">Sign out</button></form>`
  }</header><main><h1>${frame.title}</h1>${
    frame.notice !== undefined &&
    html`<p class="${frame.notice.kind}" role="${
      frame.notice.kind === "problem" ? "alert" : "status"
    }">${frame.notice.text}</p>`
  }${content}</main></body></html>`.markup

/** `2026-11-25T10:00:00.000Z` as `2026-11-25 10:00:00 UTC`, in a `<time>` element. */
export const time = (epochMsOrIso: number | string | null | undefined): Html => {
  if (epochMsOrIso === null || epochMsOrIso === undefined) return html`–`
  const iso = typeof epochMsOrIso === "number" ? new Date(epochMsOrIso).toISOString() : epochMsOrIso
  return html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC")}</time>`
}
