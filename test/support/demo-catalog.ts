/** The demo catalog that ships with the service, as the catalog of a test application. */
import { Effect, Layer } from "effect"
import {
  Catalog,
  DEMO_CATALOG_FILE,
  fixedCatalog,
  loadCatalogFile,
  makeLiveCatalog
} from "../../src/catalog/catalog-service.ts"

/** The file's snapshot, never changing and without a product store. */
export const FixedDemoCatalog = Layer.effect(Catalog, Effect.map(loadCatalogFile(DEMO_CATALOG_FILE), fixedCatalog))

/**
 * The demo file over the test's product store, as the server runs it, but reloaded only after this
 * application's own writes (no poll: `TestClock` would run one per interval it is moved by).
 */
export const DemoCatalog = Layer.scoped(
  Catalog,
  Effect.flatMap(loadCatalogFile(DEMO_CATALOG_FILE), (file) => makeLiveCatalog(file, { poll: false }))
)
