/**
 * The port of the merchant's publication to an agent-hosted Feed API (`FEED_API_URL`): push every
 * product now, push what changed, its state, retry the dead letters. Implemented by
 * `http/feed-publisher.ts`; read by the publication routes and the console. Absent without `FEED_API_URL`.
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type { PushState } from "./feed-publication-store.ts"

export interface PushReport {
  readonly feedId: string
  /** Accepted by the Feed API in this push. */
  readonly sent: number
  /** Already published in their current form. */
  readonly unchanged: number
  /** Held by another process's push, or waiting for their backoff. */
  readonly deferred: number
  /** Refused or not answered; retried later, or dead-lettered. */
  readonly failed: number
}

export interface PublicationStatus {
  readonly apiUrl: string
  readonly feedId: string | undefined
  readonly products: number
  readonly published: number
  readonly pending: ReadonlyArray<PushState>
  readonly dead: ReadonlyArray<PushState>
}

/** The feed could not be created at the Feed API (or another process is creating it): nothing pushed. */
export class FeedUnavailable extends Data.TaggedError("FeedUnavailable")<{
  readonly message: string
  /** Another process holds the creation: expected when several start at once, and soon over. */
  readonly elsewhere?: boolean
}> {}

export interface FeedPublisherShape {
  /** Every product sent now, published or not (the feed created first if needed). */
  readonly pushAll: Effect.Effect<PushReport, FeedUnavailable | StorageError>
  /** The products whose feed form changed, and those due again after a failure. */
  readonly pushChanged: Effect.Effect<PushReport, FeedUnavailable | StorageError>
  readonly status: Effect.Effect<PublicationStatus, StorageError>
  /** The dead-lettered products due again; how many. */
  readonly retryDead: Effect.Effect<number, StorageError>
}

/** None when nothing is published (`FEED_API_URL=off`, or unset in production). */
export class FeedPublisher
  extends Context.Tag("acp/FeedPublisher")<FeedPublisher, Option.Option<FeedPublisherShape>>()
{}
