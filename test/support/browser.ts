/**
 * Browser tests: Debian's Chromium driven by `playwright-core` (Playwright's own browser builds
 * cannot be downloaded here), against the test's application served on a local port. Tests that
 * need it skip themselves where Chromium is not installed (`.ci/run` installs it). Screenshots go
 * to `test-results/screenshots/`, kept as artifacts.
 */
import { Effect } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type Browser, chromium } from "playwright-core"
import { appHandler } from "./http.ts"

export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
export const hasChromium = existsSync(CHROMIUM)

export const SCREENSHOTS = join(process.cwd(), "test-results", "screenshots")

/** The test's application on 127.0.0.1 (a free port) for the scope; its base URL. */
export const serveApp = Effect.gen(function*() {
  const handler = yield* appHandler
  const server = createServer((incoming, outgoing) => {
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => {
      const headers = new Headers()
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (typeof value === "string") headers.set(name, value)
      }
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
      void handler(
        new Request(`http://127.0.0.1${incoming.url ?? "/"}`, {
          method: incoming.method ?? "GET",
          headers,
          ...(body === undefined ? {} : { body })
        })
      ).then(async (response) => {
        response.headers.forEach((value, name) => {
          if (name !== "set-cookie") outgoing.setHeader(name, value)
        })
        const cookies = response.headers.getSetCookie()
        if (cookies.length > 0) outgoing.setHeader("set-cookie", cookies)
        outgoing.statusCode = response.status
        outgoing.end(Buffer.from(await response.arrayBuffer()))
      })
    })
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

/** A page of `html` served on 127.0.0.1 (another port: another origin of the same site) for the scope; its URL. */
export const serveStaticPage = (html: string) =>
  Effect.gen(function*() {
    const server = createServer((_incoming, outgoing) => {
      outgoing.setHeader("content-type", "text/html; charset=utf-8")
      outgoing.end(html)
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    )
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  })

/** Headless Chromium for the scope. */
export const launchBrowser = Effect.acquireRelease(
  Effect.promise((): Promise<Browser> =>
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] })
  ),
  (browser) => Effect.promise(() => browser.close())
)

export const screenshotPath = (name: string) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  return join(SCREENSHOTS, `${name}.png`)
}
