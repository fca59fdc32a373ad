/**
 * The catalog as the merchant can honour it: the handlers the provider can charge (a Stripe handler
 * only with a Stripe key), each with 3-D Secure (`supports_3ds`) only if its provider carries it out,
 * and the 3-D Secure intervention only if the provider can.
 */
import type { CatalogSnapshot, PaymentHandler } from "../../catalog/model/catalog.ts"

/** Whether a catalog handler can be offered, and with 3-D Secure; `needs` names what is missing. */
export type HandlerSupport =
  | { readonly offered: true; readonly threeDSecure: boolean }
  | { readonly offered: false; readonly needs: string }

export interface OfferingProvider {
  readonly threeDSecure: boolean
  readonly handlerSupport?: ((handler: PaymentHandler) => HandlerSupport) | undefined
}

/** A handler's 3-D Secure needs the provider's too: the intervention is offered only then. */
export const supportOf = (provider: OfferingProvider, handler: PaymentHandler): HandlerSupport => {
  const support = provider.handlerSupport?.(handler) ?? { offered: true, threeDSecure: provider.threeDSecure }
  return support.offered ? { offered: true, threeDSecure: support.threeDSecure && provider.threeDSecure } : support
}

export const offeredCatalog = (catalog: CatalogSnapshot, provider: OfferingProvider): CatalogSnapshot => {
  const interventions = catalog.interventions
  return {
    ...catalog,
    paymentHandlers: catalog.paymentHandlers.flatMap((handler) => {
      const support = supportOf(provider, handler)
      if (!support.offered) return []
      return "supports_3ds" in handler.config
        ? [{ ...handler, config: { ...handler.config, supports_3ds: support.threeDSecure } }]
        : [handler]
    }),
    interventions: interventions === undefined || provider.threeDSecure ? interventions : {
      ...interventions,
      supported: interventions.supported.filter((type) => type !== "3ds"),
      ...(interventions.required === undefined
        ? {}
        : { required: interventions.required.filter((type) => type !== "3ds") })
    }
  }
}
