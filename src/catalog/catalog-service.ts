/**
 * The merchant catalog: the file at `CATALOG_FILE` (or the demo catalog), read once at start, states
 * tax, shipping, links, coupons and payment handlers, and seeds the database with its products; the
 * products sold are the database's, held in memory and reloaded when its catalog version changes.
 */
import { Context, Data, Effect, Either, Layer, Option, Schedule, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import type { StorageError } from "../db/storage-error.ts"
import { AppConfig } from "../platform/config.ts"
import { firstFailureAtJsonPath } from "../shared/schema-failure.ts"
import { withProducts } from "./model/catalog-items.ts"
import { makeCatalogSnapshot } from "./model/catalog-snapshot.ts"
import { CatalogFile, type CatalogSnapshot } from "./model/catalog.ts"
import { ProductStore } from "./product-store.ts"

export const DEMO_CATALOG_FILE = fileURLToPath(new URL("../../catalog/demo-catalog.json", import.meta.url))

export class CatalogError extends Data.TaggedError("CatalogError")<{ readonly file: string; readonly reason: string }> {
  override get message() {
    return `Catalog ${this.file}: ${this.reason}`
  }
}

export interface CatalogService {
  /** The catalog as last loaded: an in-memory read, never the database's. */
  readonly current: Effect.Effect<CatalogSnapshot>
  /** The same, for a synchronous reader inside an effect. */
  readonly latest: () => CatalogSnapshot
  /** Reloads now if the database's catalog changed (after this process's own product write). */
  readonly refresh: Effect.Effect<void, StorageError>
}

export class Catalog extends Context.Tag("acp/Catalog")<Catalog, CatalogService>() {}

/** A catalog that never changes (a snapshot given, or a file without a database). */
export const fixedCatalog = (snapshot: CatalogSnapshot): CatalogService => ({
  current: Effect.succeed(snapshot),
  latest: () => snapshot,
  refresh: Effect.void
})

export const parseCatalog = (file: string, text: string): Either.Either<CatalogSnapshot, CatalogError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left(new CatalogError({ file, reason: "is not valid JSON" }))
  }
  return Schema.decodeUnknownEither(CatalogFile, { errors: "first" })(json).pipe(
    Either.mapLeft((error) => new CatalogError({ file, reason: firstFailureAtJsonPath(error).message })),
    Either.flatMap((decoded) =>
      makeCatalogSnapshot(decoded).pipe(Either.mapLeft((reason) => new CatalogError({ file, reason })))
    )
  )
}

export const loadCatalogFile = (file: string): Effect.Effect<CatalogSnapshot, CatalogError> =>
  Effect.tryPromise({
    try: () => readFile(file, "utf8"),
    catch: (e) =>
      new CatalogError({ file, reason: `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` })
  }).pipe(Effect.flatMap((text) => parseCatalog(file, text)))

export const configuredCatalogFile = Effect.flatMap(
  AppConfig,
  (config) => loadCatalogFile(Option.getOrElse(config.catalogFile, () => DEMO_CATALOG_FILE))
)

/** How often each process asks the database whether its catalog changed: one single-row read. */
export const CATALOG_POLL_INTERVAL = "200 millis"

/**
 * The database's products with the file's rules. The file's products the database lacks are imported
 * first (every item id of a flat file keeps selling); afterwards only the Products API changes them.
 */
export const makeLiveCatalog = Effect.fnUntraced(
  function*(file: CatalogSnapshot, options: { readonly poll: boolean } = { poll: true }) {
    const store = yield* ProductStore
    yield* store.importSeed(file.seed, yield* Effect.clockWith((clock) => clock.currentTimeMillis))
    const loaded = yield* store.all
    let version = loaded.version
    let snapshot = withProducts(file, loaded.products)
    const reload = Effect.flatMap(store.all, (next) =>
      Effect.sync(() => {
        // Of two reloads racing, the newer version wins.
        if (next.version < version) return
        version = next.version
        snapshot = withProducts(file, next.products)
      }))
    const refresh = Effect.flatMap(store.catalogVersion, (seen) => (seen === version ? Effect.void : reload))
    if (options.poll) {
      yield* refresh.pipe(
        Effect.catchAll((error) => Effect.logWarning("catalog reload failed", error.reason)),
        Effect.repeat(Schedule.spaced(CATALOG_POLL_INTERVAL)),
        Effect.forkScoped
      )
    }
    return Catalog.of({ current: Effect.sync(() => snapshot), latest: () => snapshot, refresh })
  }
)

export const CatalogLive = Layer.scoped(Catalog, Effect.flatMap(configuredCatalogFile, makeLiveCatalog))
