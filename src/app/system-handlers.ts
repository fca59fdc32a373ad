/**
 * Health (`/healthz`: the process answers), readiness (`/readyz`: storage answers too) and the
 * public discovery document `/.well-known/acp.json`.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CheckoutStore } from "../checkout/checkout-store.ts"
import { AppConfig } from "../platform/config.ts"
import { serviceUnavailable } from "../platform/http/errors.ts"
import { Api } from "./api.ts"

export const SystemHandlers = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const store = yield* CheckoutStore
    const config = yield* AppConfig
    const discovery = {
      protocol: "acp" as const,
      supported_versions: [...config.apiVersions],
      roles: [...config.roles],
      merchant_id: config.merchantId
    }
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        store.ping.pipe(
          Effect.as({ status: "ready" as const, storage: "ok" as const }),
          Effect.mapError(() => serviceUnavailable())
        ))
      .handle("wellKnown", () => Effect.succeed(discovery))
  }))
