/** The catalog as the merchant can honour it: 3-D Secure (`interventions`, `supports_3ds`) only if the provider can. */
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
