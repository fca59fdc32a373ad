/** The demo catalog that ships with the service, as the catalog of a test application. */
import { Layer } from "effect"
import { Catalog, DEMO_CATALOG_FILE, loadCatalogFile } from "../../src/catalog/catalog-service.ts"

export const DemoCatalog = Layer.effect(Catalog, loadCatalogFile(DEMO_CATALOG_FILE))
