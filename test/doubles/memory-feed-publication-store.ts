/** In-memory `FeedPublicationStore` (see `feed-publication-store.ts`) on a `MemoryDatabase`. */
import { Effect, Layer, Option } from "effect"
import {
  FeedPublicationStore,
  type FeedPublicationStoreService,
  type Publication,
  type PushState
} from "../../src/feeds/feed-publication-store.ts"
import { MemoryDatabase } from "./memory-database.ts"

interface PublicationRow {
  readonly publication: Publication | undefined
  readonly claimedAt: number
}

type StateRow = PushState & { readonly lockedUntil: number | undefined }

const keyOf = (apiUrl: string, productId: string) => JSON.stringify([apiUrl, productId])

const fresh = (productId: string): StateRow => ({
  productId,
  pushedHash: undefined,
  pushedAt: undefined,
  attempts: 0,
  nextAttemptAt: undefined,
  lastError: undefined,
  deadAt: undefined,
  lockedUntil: undefined
})

export const make = Effect.map(MemoryDatabase, (db): FeedPublicationStoreService => {
  const publications = db.table<string, PublicationRow>("feed_publications")
  const states = db.table<string, StateRow & { readonly apiUrl: string }>("feed_push_states")
  const ofUrl = (apiUrl: string) => [...states.values()].filter((row) => row.apiUrl === apiUrl)
  const update = (apiUrl: string, productId: string, change: (row: StateRow) => StateRow) => {
    const row = states.get(keyOf(apiUrl, productId))
    if (row !== undefined) states.set(keyOf(apiUrl, productId), { ...change(row), apiUrl })
  }
  const view = ({ apiUrl: _apiUrl, lockedUntil: _lockedUntil, ...state }: StateRow & { apiUrl: string }) => state
  return {
    publication: (apiUrl) => db.sync(() => Option.fromNullable(publications.get(apiUrl)?.publication)),
    claimCreation: (apiUrl, now, leaseMs) =>
      db.sync(() => {
        const row = publications.get(apiUrl)
        if (row !== undefined && (row.publication !== undefined || row.claimedAt > now - leaseMs)) return false
        publications.set(apiUrl, { publication: undefined, claimedAt: now })
        return true
      }),
    savePublication: (publication) =>
      db.sync(() => void publications.set(publication.apiUrl, { publication, claimedAt: publication.createdAt })),
    dropPublication: (apiUrl) =>
      db.sync(() => {
        publications.delete(apiUrl)
        for (const row of ofUrl(apiUrl)) states.delete(keyOf(apiUrl, row.productId))
      }),
    states: (apiUrl) => db.sync(() => ofUrl(apiUrl).sort((a, b) => (a.productId < b.productId ? -1 : 1)).map(view)),
    claim: (apiUrl, productIds, now, leaseMs) =>
      db.sync(() =>
        productIds.filter((productId) => {
          const row = states.get(keyOf(apiUrl, productId)) ?? { ...fresh(productId), apiUrl }
          if (row.lockedUntil !== undefined && row.lockedUntil > now) return false
          states.set(keyOf(apiUrl, productId), { ...row, lockedUntil: now + leaseMs })
          return true
        })
      ),
    pushed: (apiUrl, pushed, now) =>
      db.sync(() => {
        for (const { hash, productId } of pushed) {
          update(apiUrl, productId, (row) => ({
            ...row,
            pushedHash: hash,
            pushedAt: now,
            attempts: 0,
            nextAttemptAt: undefined,
            lastError: undefined,
            deadAt: undefined,
            lockedUntil: undefined
          }))
        }
      }),
    failed: (apiUrl, productIds, failure, now) =>
      db.sync(() => {
        for (const productId of productIds) {
          update(apiUrl, productId, (row) => ({
            ...row,
            attempts: row.attempts + 1,
            lastError: failure.message,
            nextAttemptAt: failure.nextAttemptAt,
            deadAt: failure.nextAttemptAt === undefined ? now : undefined,
            lockedUntil: undefined
          }))
        }
      }),
    retry: (apiUrl, productIds) =>
      db.sync(() => {
        const chosen = ofUrl(apiUrl).filter((row) =>
          productIds === undefined ? row.deadAt !== undefined : productIds.includes(row.productId)
        )
        for (const row of chosen) {
          update(apiUrl, row.productId, (state) => ({
            ...state,
            attempts: 0,
            nextAttemptAt: undefined,
            deadAt: undefined,
            pushedHash: undefined
          }))
        }
        return chosen.length
      })
  }
})

export const MemoryFeedPublicationStore = Layer.effect(FeedPublicationStore, make)
