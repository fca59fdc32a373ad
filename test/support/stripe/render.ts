/**
 * Responses as snapshots, with `expand[]` applied (API reference, "Expanding responses"): an
 * expandable id is replaced by its object. Each route names what it can expand; any other path is
 * refused before the endpoint runs, as Stripe refuses it.
 */
import { invalidRequest } from "./errors.ts"
import type { PaymentIntent, Refund } from "./objects.ts"
import { snapshot } from "./objects.ts"
import type { FakeState } from "./state.ts"

export const checkExpand = (expand: ReadonlyArray<string>, allowed: ReadonlyArray<string>): void => {
  for (const path of expand) {
    if (!allowed.includes(path)) {
      throw invalidRequest(`This property cannot be expanded (${path}).`, { param: "expand" })
    }
  }
}

export const expandIntent = (intent: PaymentIntent, expand: ReadonlyArray<string>, state?: FakeState): unknown => {
  const copy: Record<string, unknown> = snapshot(intent) as any
  if (state !== undefined && expand.includes("latest_charge") && intent.latest_charge !== null) {
    copy.latest_charge = snapshot(state.charges.get(intent.latest_charge))
  }
  return copy
}

export const expandRefund = (refund: Refund, expand: ReadonlyArray<string>, state: FakeState): unknown => {
  const copy: Record<string, unknown> = snapshot(refund) as any
  if (expand.includes("charge")) copy.charge = snapshot(state.charges.get(refund.charge))
  if (expand.includes("payment_intent")) copy.payment_intent = snapshot(state.paymentIntents.get(refund.payment_intent))
  return copy
}
