/**
 * Handlers of the console (`api.ts`), served while one of its roles is on, each page only with its own.
 * A page without a live session redirects to sign-in; storage failures answer a 503 page.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Option } from "effect"
import { CartService } from "../../carts/cart-service.ts"
import { Catalog } from "../../catalog/catalog-service.ts"
import { CheckoutStore } from "../../checkout/checkout-store.ts"
import { SessionStatus } from "../../checkout/session/schemas.ts"
import type { StorageError } from "../../db/storage-error.ts"
import { OrderStore } from "../../orders/order-store.ts"
import { AppConfig, type Role } from "../../platform/config.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { requireRole } from "../../platform/http/route-guards.ts"
import { Ids } from "../../platform/ids.ts"
import { html } from "../../shared/html.ts"
import { ReceivedEventsStore } from "../../webhook-receiver/received-events-store.ts"
import type { ConsoleSession } from "../console-session-store.ts"
import { ConsoleAccess, type FormFields } from "./access-middleware.ts"
import { ConsoleApi } from "./api.ts"
import { renderCarts } from "./cart-pages.ts"
import { CONSOLE_PATH, cookieOptions, SESSION_COOKIE, SIGN_IN_COOKIE, SIGN_IN_TTL_SECONDS } from "./cookies.ts"
import { makeFeedHandlers } from "./feed-handlers.ts"
import { type Frame, type Notice, pagesFor } from "./layout.ts"
import { makeOrderHandlers, queryParam, unstorableId } from "./order-handlers.ts"
import { forgedForm, pageResponse, redirect, unavailablePage, unreadableForm } from "./page-handlers.ts"
import {
  renderDeliveries,
  renderReceivedEvents,
  renderReceivedOrders,
  renderSessions,
  renderSignIn,
  renderStock
} from "./pages.ts"
import { makeProductHandlers } from "./product-handlers.ts"

const CONSOLE_ROLES: ReadonlyArray<Role> = ["checkout", "webhook_sender", "webhook_receiver"]
const SIGN_IN_PATH = `${CONSOLE_PATH}/sign-in`
const AGENT_KEY_REFUSED =
  "That is an agent API key (API_KEYS): the console takes a merchant API key (MERCHANT_API_KEYS)."

type Answer = Effect.Effect<HttpServerResponse.HttpServerResponse, StorageError, HttpServerRequest.HttpServerRequest>

const orUnavailable = <R>(answer: Effect.Effect<HttpServerResponse.HttpServerResponse, StorageError, R>) =>
  Effect.catchTag(
    answer,
    "StorageError",
    (error) => Effect.as(Effect.logError("storage error", error.reason, error.cause), unavailablePage())
  )

export const ConsoleHandlers = groupHandlers(
  ConsoleApi,
  "console",
  Effect.fnUntraced(function*(handlers) {
    const access = yield* ConsoleAccess
    const config = yield* AppConfig
    const catalog = yield* Catalog
    const orderStore = yield* OrderStore
    const checkout = yield* CheckoutStore
    const received = yield* ReceivedEventsStore
    const carts = yield* CartService
    const ids = yield* Ids
    const pages = pagesFor(config.roles)
    const frameOf = (session: ConsoleSession, title: string, notice?: Notice): Frame => ({
      title,
      pages,
      csrfToken: session.csrfToken,
      notice
    })
    const orderPages = yield* makeOrderHandlers(frameOf)
    const productPages = yield* makeProductHandlers(frameOf)
    const feedPage = yield* makeFeedHandlers(frameOf)

    const bySession = (answer: (session: Option.Option<ConsoleSession>) => Answer) =>
      Effect.zipRight(requireRole(config, ...CONSOLE_ROLES), orUnavailable(Effect.flatMap(access.current, answer)))

    /** A page for a signed-in browser (others go to sign-in), served while one of `roles` is on. */
    const signedIn = (roles: ReadonlyArray<Role>, render: (session: ConsoleSession) => Answer) =>
      Effect.zipRight(
        requireRole(config, ...roles),
        orUnavailable(Effect.flatMap(access.current, (session) =>
          Option.match(session, {
            onNone: () => Effect.succeed(redirect(SIGN_IN_PATH)),
            onSome: render
          })))
      )

    /** A form of a signed-in page: acted on only with the session's CSRF token. */
    const posted = (roles: ReadonlyArray<Role>, act: (session: ConsoleSession, fields: FormFields) => Answer) =>
      Effect.zipRight(requireRole(config, ...roles), orUnavailable(actOnForm(act)))
    const actOnForm = Effect.fnUntraced(function*(act: (session: ConsoleSession, fields: FormFields) => Answer) {
      const session = yield* access.current
      const fields = yield* Effect.either(access.readForm(Option.getOrUndefined(session)?.csrfToken))
      if (fields._tag === "Left" || Option.isNone(session)) {
        return fields._tag === "Left" && fields.left === "unreadable" ? unreadableForm() : forgedForm()
      }
      return yield* act(session.value, fields.right)
    })

    /** The sign-in page, with a fresh token in its form and in its own short-lived cookie. */
    const signInForm = (notice?: Notice, status = 200) =>
      Effect.map(
        ids.make(""),
        (token) =>
          pageResponse({ title: "Sign in", pages: [], notice }, renderSignIn(token), status).pipe(
            HttpServerResponse.unsafeSetCookie(
              SIGN_IN_COOKIE,
              token,
              cookieOptions(access.secureCookies, SIGN_IN_TTL_SECONDS)
            )
          )
      )

    /** The sign-in form posted: a console session for a valid API key (made once, run per request). */
    const signIn = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const fields = yield* Effect.either(access.readForm(request.cookies[SIGN_IN_COOKIE]))
      if (fields._tag === "Left") {
        return yield* signInForm(
          { kind: "problem", text: "The sign-in form expired or did not come from this page. Sign in again." },
          403
        )
      }
      const opened = yield* access.signIn(fields.right.get("api_key") ?? "")
      if (opened._tag === "Left") {
        return yield* opened.left === "agent_key"
          ? signInForm({ kind: "problem", text: AGENT_KEY_REFUSED }, 403)
          : signInForm({ kind: "problem", text: "That is not an API key of this service." }, 401)
      }
      const { session, token } = opened.right
      return redirect(CONSOLE_PATH).pipe(
        HttpServerResponse.unsafeSetCookie(
          SESSION_COOKIE,
          token,
          cookieOptions(access.secureCookies, Math.floor((session.expiresAt - session.createdAt) / 1000))
        ),
        HttpServerResponse.unsafeSetCookie(SIGN_IN_COOKIE, "", cookieOptions(access.secureCookies, 0))
      )
    })

    return handlers
      .handleRaw(
        "home",
        () =>
          bySession((session) =>
            Effect.succeed(redirect(Option.isSome(session) && pages.length > 0 ? pages[0]!.path : SIGN_IN_PATH))
          )
      )
      .handleRaw(
        "signInPage",
        () => bySession((session) => Option.isSome(session) ? Effect.succeed(redirect(CONSOLE_PATH)) : signInForm())
      )
      .handleRaw("signIn", () => Effect.zipRight(requireRole(config, ...CONSOLE_ROLES), orUnavailable(signIn)))
      .handleRaw("signOut", () =>
        posted(CONSOLE_ROLES, (session) =>
          Effect.as(
            access.signOut(session),
            redirect(SIGN_IN_PATH).pipe(
              HttpServerResponse.unsafeSetCookie(SESSION_COOKIE, "", cookieOptions(access.secureCookies, 0))
            )
          )))
      .handleRaw("orders", () => signedIn(["checkout"], orderPages.list))
      .handleRaw("order", ({ path }) => signedIn(["checkout"], (session) => orderPages.view(session, path.order_id)))
      .handleRaw(
        "orderAction",
        ({ path }) =>
          posted(["checkout"], (session, fields) => orderPages.act(session, path.order_id, path.action, fields))
      )
      .handleRaw("deliveries", () =>
        signedIn(
          ["checkout", "webhook_sender"],
          Effect.fnUntraced(function*(session) {
            const request = yield* HttpServerRequest.HttpServerRequest
            const given = queryParam(request, "state")
            const state = given === "pending" || given === "delivered" || given === "dead" ? given : undefined
            const events = yield* orderStore.listEvents({ ...(state !== undefined ? { state } : {}), limit: 100 })
            const counts = yield* orderStore.countByState
            const done = queryParam(request, "done") === "redrive"
            return pageResponse(
              frameOf(
                session,
                "Order-event deliveries",
                done ? { kind: "notice", text: "Event queued for delivery again." } : undefined
              ),
              renderDeliveries(events, counts, state, session.csrfToken, config.roles.has("checkout"))
            )
          })
        ))
      .handleRaw("redrive", ({ path }) =>
        posted(
          ["checkout", "webhook_sender"],
          Effect.fnUntraced(function*(session) {
            const now = yield* Clock.currentTimeMillis
            const redriven = unstorableId(path.event_id)
              ? Option.none()
              : yield* orderStore.redrive(path.event_id, now)
            return Option.isSome(redriven)
              ? redirect(`${CONSOLE_PATH}/deliveries?done=redrive`)
              : pageResponse(
                frameOf(session, "Nothing to redrive", {
                  kind: "problem",
                  text: `Order event ${path.event_id} is not dead-lettered (or was redriven already); nothing was done.`
                }),
                html`<p><a href="${CONSOLE_PATH}/deliveries">Back to the deliveries</a></p>`,
                409
              )
          })
        ))
      .handleRaw(
        "received",
        () =>
          signedIn(
            ["webhook_receiver"],
            (session) =>
              Effect.map(
                received.listOrders(100),
                (orders) => pageResponse(frameOf(session, "Received order events"), renderReceivedOrders(orders))
              )
          )
      )
      .handleRaw(
        "receivedOrder",
        ({ path }) =>
          signedIn(["webhook_receiver"], (session) =>
            Effect.map(
              unstorableId(path.order_id) ? Effect.succeed([]) : received.listEvents(path.order_id),
              (events) =>
                pageResponse(
                  frameOf(session, `Received events of ${path.order_id}`),
                  renderReceivedEvents(events)
                )
            ))
      )
      .handleRaw(
        "stock",
        () =>
          signedIn(
            ["checkout"],
            (session) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) =>
                Effect.map(checkout.inventory.stockLevels(now), (levels) =>
                  pageResponse(frameOf(session, "Stock"), renderStock(levels, catalog.latest()))))
          )
      )
      .handleRaw("sessions", () =>
        signedIn(
          ["checkout"],
          Effect.fnUntraced(function*(session) {
            const request = yield* HttpServerRequest.HttpServerRequest
            const given = queryParam(request, "status")
            const status = SessionStatus.literals.find((name) => name === given)
            const sessions = yield* checkout.sessions.list({ ...(status !== undefined ? { status } : {}), limit: 100 })
            return pageResponse(
              frameOf(session, "Checkout sessions"),
              renderSessions(sessions, status, catalog.latest(), config.roles.has("checkout"))
            )
          })
        ))
      .handleRaw("products", () => signedIn(["checkout"], productPages.list))
      .handleRaw(
        "product",
        ({ path }) => signedIn(["checkout"], (session) => productPages.view(session, path.product_id))
      )
      .handleRaw(
        "productTitle",
        ({ path }) => posted(["checkout"], (session, fields) => productPages.rename(session, path.product_id, fields))
      )
      .handleRaw(
        "productArchive",
        ({ path }) => posted(["checkout"], (session, fields) => productPages.archive(session, path.product_id, fields))
      )
      .handleRaw(
        "productVariant",
        ({ path }) =>
          posted(
            ["checkout"],
            (session, fields) => productPages.editVariant(session, path.product_id, path.variant_id, fields)
          )
      )
      .handleRaw("feed", () => signedIn(["checkout"], feedPage.view))
      .handleRaw("feedPush", () => posted(["checkout"], feedPage.push))
      .handleRaw("feedRetry", () => posted(["checkout"], feedPage.retry))
      .handleRaw("carts", () =>
        signedIn(
          ["checkout"],
          (session) =>
            Effect.map(
              carts.overview(100),
              (overview) => pageResponse(frameOf(session, "Carts"), renderCarts(overview))
            )
        ))
  })
)
