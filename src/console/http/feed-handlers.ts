/**
 * The console's feed page and its two forms, through the feeds' `FeedPublisher` as the merchant's
 * `/feed-publication` routes use it: absent without `FEED_API_URL` (the page says so, the forms do nothing).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import type { StorageError } from "../../db/storage-error.ts"
import { FeedPublisher, type FeedPublisherShape } from "../../feeds/feed-publisher.ts"
import type { ConsoleSession } from "../console-session-store.ts"
import { FEED_PATH, renderFeed, renderFeedOff } from "./feed-pages.ts"
import type { Notice } from "./layout.ts"
import { type FrameOf, queryParam } from "./order-handlers.ts"
import { pageResponse, redirect } from "./page-handlers.ts"

type Answer = Effect.Effect<HttpServerResponse.HttpServerResponse, StorageError>

const TITLE = "Product feed"

const count = (request: HttpServerRequest.HttpServerRequest, name: string): number | undefined => {
  const given = queryParam(request, name) ?? ""
  return /^\d{1,9}$/.test(given) ? Number(given) : undefined
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** What the last form did, from the redirect's query (numbers only: never text from the request). */
const doneNotice = (request: HttpServerRequest.HttpServerRequest): Notice | undefined => {
  const done = queryParam(request, "done")
  if (done === "push") {
    const sent = count(request, "sent")
    const failed = count(request, "failed")
    const deferred = count(request, "deferred")
    if (sent === undefined || failed === undefined || deferred === undefined) return undefined
    return {
      kind: failed > 0 ? "problem" : "notice",
      text: `Pushed every product: ${plural(sent, "product", "products")} accepted, ${failed} failed` +
        `${failed > 0 ? " (retried with backoff)" : ""}, ${deferred} held by another process or waiting for a retry.`
    }
  }
  if (done === "retry") {
    const retried = count(request, "retried")
    if (retried === undefined) return undefined
    return {
      kind: "notice",
      text: retried === 0
        ? "No dead-lettered products to retry."
        : `${plural(retried, "dead-lettered product is", "dead-lettered products are")} due again: pushed within ` +
          "a minute, or now with Push all now."
    }
  }
  return undefined
}

export const makeFeedHandlers = Effect.fnUntraced(function*(frameOf: FrameOf) {
  const publisher = yield* FeedPublisher

  const page = (session: ConsoleSession, feeds: FeedPublisherShape, notice?: Notice, status = 200) =>
    Effect.map(
      feeds.status,
      (state) => pageResponse(frameOf(session, TITLE, notice), renderFeed(state, session.csrfToken), status)
    )

  const off = (session: ConsoleSession, status = 200) =>
    Effect.succeed(pageResponse(frameOf(session, TITLE), renderFeedOff(), status))

  const view = (
    session: ConsoleSession
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, StorageError, HttpServerRequest.HttpServerRequest> =>
    Option.match(publisher, {
      onNone: () => off(session),
      onSome: (feeds) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => page(session, feeds, doneNotice(request)))
    })

  const push = (session: ConsoleSession): Answer =>
    Option.match(publisher, {
      onNone: () => off(session, 404),
      onSome: (feeds) =>
        feeds.pushAll.pipe(
          Effect.map((report) =>
            redirect(`${FEED_PATH}?done=push&sent=${report.sent}&failed=${report.failed}&deferred=${report.deferred}`)
          ),
          Effect.catchTag("FeedUnavailable", (error) =>
            page(
              session,
              feeds,
              { kind: "problem", text: `Nothing was pushed: ${error.message}. Try again shortly.` },
              503
            ))
        )
    })

  const retry = (session: ConsoleSession): Answer =>
    Option.match(publisher, {
      onNone: () => off(session, 404),
      onSome: (feeds) =>
        Effect.map(feeds.retryDead, (retried) => redirect(`${FEED_PATH}?done=retry&retried=${retried}`))
    })

  return { view, push, retry }
})
