/**
 * The catalog as the merchant can honour it with its payment provider: 3-D Secure is advertised
 * (in `interventions`, and as `supports_3ds` in the card handlers' config) only when the provider
 * carries it out, whatever the catalog file says.
 */
import type { CatalogSnapshot } from "../../catalog/model/catalog.ts"

export const offeredCatalog = (
  catalog: CatalogSnapshot,
  provider: { readonly threeDSecure: boolean }
): CatalogSnapshot => {
  const interventions = catalog.interventions
  return {
    ...catalog,
    paymentHandlers: catalog.paymentHandlers.map((handler) =>
      "supports_3ds" in handler.config
        ? { ...handler, config: { ...handler.config, supports_3ds: provider.threeDSecure } }
        : handler
    ),
    interventions: interventions === undefined || provider.threeDSecure ? interventions : {
      ...interventions,
      supported: interventions.supported.filter((type) => type !== "3ds"),
      ...(interventions.required === undefined
        ? {}
        : { required: interventions.required.filter((type) => type !== "3ds") })
    }
  }
}
