/**
 * The endpoints the fake serves: method, path, parameters, what `expand` may name, and what runs.
 * Every endpoint answers 200 with its object or throws a `StripeApiError`.
 */
import { resourceMissing } from "./errors.ts"
import { createToken, createTokenFields, retrieveToken, revokeToken, type TokenParams } from "./granted-tokens.ts"
import { snapshot } from "./objects.ts"
import { type Fields, withExpand } from "./params.ts"
import {
  cancelFields,
  cancelIntent,
  captureFields,
  captureIntent,
  confirmExisting,
  confirmFields,
  createFields,
  createIntent,
  findIntent,
  retrieveFields,
  searchFields,
  searchIntents
} from "./payment-intents.ts"
import { createRefund, createRefundFields, findCharge, findRefund, listRefundFields, listRefunds } from "./refunds.ts"
import { expandIntent, expandRefund } from "./render.ts"
import type { FakeState, RequestContext } from "./state.ts"

export interface Call {
  /** The `:id` of the path, if it has one. */
  readonly id: string
  readonly params: Record<string, any>
  readonly expand: ReadonlyArray<string>
  readonly request: RequestContext
}

export interface Route {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly pattern: RegExp
  readonly fields: Fields
  readonly expandable: ReadonlyArray<string>
  readonly run: (state: FakeState, call: Call) => unknown
}

const route = (
  method: Route["method"],
  path: string,
  fields: Fields,
  expandable: ReadonlyArray<string>,
  run: Route["run"]
): Route => ({
  method,
  path,
  pattern: new RegExp(`^${path.replace(":id", "([A-Za-z0-9_]+)")}$`),
  fields,
  expandable,
  run
})

const noParams = withExpand({})

export const ROUTES: ReadonlyArray<Route> = [
  route(
    "POST",
    "/v1/payment_intents",
    createFields,
    ["latest_charge"],
    (state, call) => expandIntent(createIntent(state, call.params, call.request), call.expand, state)
  ),
  route(
    "GET",
    "/v1/payment_intents/search",
    searchFields,
    ["data.latest_charge"],
    (state, call) => searchIntents(state, call.params, call.expand)
  ),
  route(
    "GET",
    "/v1/payment_intents/:id",
    retrieveFields,
    ["latest_charge"],
    (state, call) => expandIntent(findIntent(state, call.id), call.expand, state)
  ),
  route(
    "POST",
    "/v1/payment_intents/:id/confirm",
    confirmFields,
    ["latest_charge"],
    (state, call) => expandIntent(confirmExisting(state, call.id, call.params, call.request), call.expand, state)
  ),
  route(
    "POST",
    "/v1/payment_intents/:id/capture",
    captureFields,
    ["latest_charge"],
    (state, call) => expandIntent(captureIntent(state, call.id, call.params, call.request), call.expand, state)
  ),
  route(
    "POST",
    "/v1/payment_intents/:id/cancel",
    cancelFields,
    ["latest_charge"],
    (state, call) => expandIntent(cancelIntent(state, call.id, call.params, call.request), call.expand, state)
  ),
  route(
    "POST",
    "/v1/refunds",
    createRefundFields,
    ["charge", "payment_intent"],
    (state, call) => expandRefund(createRefund(state, call.params, call.request), call.expand, state)
  ),
  route("GET", "/v1/refunds", listRefundFields, [], (state, call) => snapshot(listRefunds(state, call.params))),
  route(
    "GET",
    "/v1/refunds/:id",
    noParams,
    ["charge", "payment_intent"],
    (state, call) => expandRefund(findRefund(state, call.id), call.expand, state)
  ),
  route("GET", "/v1/charges/:id", noParams, [], (state, call) => snapshot(findCharge(state, call.id))),
  route("GET", "/v1/events/:id", noParams, [], (state, call) => {
    const event = state.events.get(call.id)
    if (event === undefined) throw resourceMissing("event", call.id)
    return snapshot(event)
  }),
  route(
    "GET",
    "/v1/shared_payment/granted_tokens/:id",
    noParams,
    [],
    (state, call) => snapshot(retrieveToken(state, call.id))
  ),
  route(
    "POST",
    "/v1/test_helpers/shared_payment/granted_tokens",
    createTokenFields,
    [],
    (state, call) => snapshot(createToken(state, call.params as TokenParams))
  ),
  route(
    "POST",
    "/v1/test_helpers/shared_payment/granted_tokens/:id/revoke",
    noParams,
    [],
    (state, call) => snapshot(revokeToken(state, call.id))
  )
]

export const findRoute = (method: string, path: string): { route: Route; id: string } | undefined => {
  for (const candidate of ROUTES) {
    if (candidate.method !== method) continue
    const match = candidate.pattern.exec(path)
    if (match !== null) return { route: candidate, id: match[1] ?? "" }
  }
  return undefined
}
