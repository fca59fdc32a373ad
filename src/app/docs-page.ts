/** `/docs`: `HttpApiSwagger`'s page with a selector of the documents, rendered here as it takes a single API. */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** The assets `HttpApiSwagger` inlines, read beside its module (no exported path); the start fails if they move. */
const swaggerAssets = (): { readonly javascript: string; readonly css: string } => {
  const require = createRequire(import.meta.url)
  const file = join(dirname(require.resolve("@effect/platform/HttpApiSwagger")), "internal", "httpApiSwagger.js")
  const assets: unknown = require(file)
  const { css, javascript } = assets as { readonly css?: unknown; readonly javascript?: unknown }
  if (typeof javascript !== "string" || typeof css !== "string") {
    throw new Error(`Swagger UI not found in ${file}`)
  }
  return { javascript, css }
}

// As @effect/platform escapes text and JSON put into its page.
const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(
    /[\u2028\u2029]/g,
    (c) => c === "\u2028" ? "\\u2028" : "\\u2029"
  )

export interface DocumentLink {
  readonly name: string
  /** Relative to the page, so the page also works behind a path prefix. */
  readonly url: string
}

/** `validatorUrl: null`: the standalone layout would otherwise send each document to an online validator. */
export const docsPage = (title: string, documents: ReadonlyArray<DocumentLink>): string => {
  const { css, javascript } = swaggerAssets()
  const list = documents.map(({ name, url }) => `<li><a href="${escapeText(url)}">${escapeText(name)}</a></li>`)
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${escapeText(title)}</title>
  <style>${css}</style>
</head>
<body>
  <noscript><ul>${list.join("")}</ul></noscript>
  <div id="swagger-ui"></div>
  <script id="swagger-documents" type="application/json">
    ${escapeJson(documents)}
  </script>
  <script>
    ${javascript}
    window.onload = () => {
      const urls = JSON.parse(document.getElementById("swagger-documents").textContent)
      window.ui = SwaggerUIBundle({
        urls,
        "urls.primaryName": urls[0].name,
        dom_id: "#swagger-ui",
        presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
        layout: "StandaloneLayout",
        validatorUrl: null
      })
    }
  </script>
</body>
</html>`
}
