/**
 * The buyer's cart page and its checkout form. The page is never cached, framed, indexed or sent as a
 * referrer (its URL is the capability). The form carries a random CSRF token that must equal the one in
 * the page's own cookie (HttpOnly, SameSite=Strict, path of this cart), and a browser's Sec-Fetch-Site
 * must say this origin: another site cannot start a checkout of a cart whose link it learnt.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../../platform/config.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { withPageHeaders } from "../../platform/http/page-headers.ts"
import { mediaTypeOf, readRawBody } from "../../platform/http/request-body.ts"
import { requireRole } from "../../platform/http/route-guards.ts"
import { Ids } from "../../platform/ids.ts"
import { CartService, type PricedCart } from "../cart-service.ts"
import { CART_PAGE_PATH, isHandoffToken } from "../model/handoff-link.ts"
import { CartPageApi } from "./handoff-api.ts"
import {
  CART_PAGE_CONTENT_SECURITY_POLICY,
  renderCartNotFound,
  renderCartPage,
  renderCheckoutStarted,
  renderTryAgain
} from "./handoff-page.ts"

export const CART_CSRF_COOKIE = "acp_cart_csrf"
const CSRF_COOKIE_SECONDS = 60 * 60

const secured = withPageHeaders(CART_PAGE_CONTENT_SECURITY_POLICY)

const htmlPage = (markup: string, status = 200) =>
  secured(HttpServerResponse.html(markup).pipe(HttpServerResponse.setStatus(status)))

const notFound = () => htmlPage(renderCartNotFound(), 404)

const sameToken = (given: string | undefined, expected: string | undefined): boolean => {
  if (given === undefined || expected === undefined || given.length === 0 || expected.length === 0) return false
  const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()
  return timingSafeEqual(digest(given), digest(expected))
}

const fromThisOrigin = (request: HttpServerRequest.HttpServerRequest) => {
  const site = request.headers["sec-fetch-site"]
  return site === undefined || site === "same-origin" || site === "none"
}

/** The posted form's `csrf_token`, if the body is a URL-encoded form. */
const postedToken = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (mediaTypeOf(request.headers["content-type"]) !== "application/x-www-form-urlencoded") return undefined
  const body = yield* Effect.option(readRawBody)
  if (Option.isNone(body)) return undefined
  return new URLSearchParams(new TextDecoder().decode(body.value)).get("csrf_token") ?? undefined
})

export const CartPageHandlers = groupHandlers(
  CartPageApi,
  "cartPage",
  Effect.fnUntraced(function*(handlers) {
    const carts = yield* CartService
    const ids = yield* Ids
    const config = yield* AppConfig
    const secure = config.publicBaseUrl.startsWith("https:") || Option.isSome(config.tls)
    const pathOf = (token: string) => `${CART_PAGE_PATH}/${token}`
    const csrfCookie = (token: string) => ({
      httpOnly: true,
      sameSite: "strict" as const,
      path: pathOf(token),
      secure,
      maxAge: `${CSRF_COOKIE_SECONDS} seconds` as const
    })
    const titleIn = ({ estimate }: PricedCart) => (itemId: string) =>
      estimate.lines.find((line) => line.item.id === itemId)?.product?.title ?? itemId

    /** The cart's page with a fresh CSRF token, in its form and in its cookie. */
    const cartPage = (token: string, priced: PricedCart, problem?: string, status = 200) =>
      Effect.map(ids.make(""), (csrfToken) =>
        htmlPage(
          renderCartPage(priced, { csrfToken, formAction: `${pathOf(token)}/checkout`, problem }),
          status
        ).pipe(
          HttpServerResponse.unsafeSetCookie(CART_CSRF_COOKIE, csrfToken, csrfCookie(token))
        ))

    const storageProblem = <A extends HttpServerResponse.HttpServerResponse, R>(
      effect: Effect.Effect<
        A,
        { readonly _tag: "StorageError"; readonly reason: string; readonly cause?: unknown } | {
          readonly _tag: "CartNotFound"
        },
        R
      >
    ) =>
      effect.pipe(
        Effect.catchAll((error) =>
          error._tag === "CartNotFound"
            ? Effect.succeed(notFound())
            : Effect.as(
              Effect.logError("storage error", error.reason),
              htmlPage(renderTryAgain(), 503).pipe(HttpServerResponse.setHeader("retry-after", "2"))
            )
        )
      )

    const view = Effect.fnUntraced(function*(token: string) {
      yield* requireRole(config, "checkout")
      if (!isHandoffToken(token)) return notFound()
      return yield* storageProblem(Effect.flatMap(carts.byHandoff(token), (priced) => cartPage(token, priced)))
    })

    const checkout = Effect.fnUntraced(function*(token: string) {
      yield* requireRole(config, "checkout")
      if (!isHandoffToken(token)) return notFound()
      const request = yield* HttpServerRequest.HttpServerRequest
      const posted = yield* postedToken
      const answer = Effect.gen(function*() {
        const priced = yield* carts.byHandoff(token)
        if (!sameToken(posted, request.cookies[CART_CSRF_COOKIE]) || !fromThisOrigin(request)) {
          return yield* cartPage(token, priced, "This form expired or did not come from this page. Try again.", 403)
        }
        return yield* carts.startCheckout(token).pipe(
          Effect.map((session) =>
            // The form's token is spent: sent again (a second click, a reload), it is refused.
            htmlPage(renderCheckoutStarted(session, titleIn(priced))).pipe(
              HttpServerResponse.unsafeSetCookie(CART_CSRF_COOKIE, "", { ...csrfCookie(token), maxAge: "0 seconds" })
            )
          ),
          Effect.catchIf(
            (error) => error._tag !== "StorageError" && error._tag !== "CartNotFound",
            (error) =>
              cartPage(
                token,
                priced,
                error._tag === "OutOfStock" || error._tag === "UnknownProduct"
                  ? "Some items of this cart cannot be bought now: ask your assistant to change the cart."
                  : "A checkout of this cart cannot be started.",
                409
              )
          )
        )
      })
      return yield* storageProblem(answer)
    })

    return handlers
      .handleRaw("view", ({ path }) => view(path.token))
      .handleRaw("checkout", ({ path }) => checkout(path.token))
  })
)
