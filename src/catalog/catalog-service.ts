/**
 * The merchant catalog, read once at start from `CATALOG_FILE` (or the demo catalog) and served as an
 * immutable snapshot. Its stock levels only seed the database, which is authoritative afterwards.
 */
import { Context, Data, Effect, Either, Layer, Option, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { AppConfig } from "../platform/config.ts"
import { firstFailureAtJsonPath } from "../shared/schema-failure.ts"
import { makeCatalogSnapshot } from "./model/catalog-snapshot.ts"
import { CatalogFile, type CatalogSnapshot } from "./model/catalog.ts"

export const DEMO_CATALOG_FILE = fileURLToPath(new URL("../../catalog/demo-catalog.json", import.meta.url))

export class CatalogError extends Data.TaggedError("CatalogError")<{ readonly file: string; readonly reason: string }> {
  override get message() {
    return `Catalog ${this.file}: ${this.reason}`
  }
}

export class Catalog extends Context.Tag("acp/Catalog")<Catalog, CatalogSnapshot>() {}

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

export const CatalogLive = Layer.effect(
  Catalog,
  Effect.flatMap(AppConfig, (config) => loadCatalogFile(Option.getOrElse(config.catalogFile, () => DEMO_CATALOG_FILE)))
)
