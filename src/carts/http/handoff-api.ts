/**
 * The buyer's cart page, the cart's `continue_url` (no API key: the token is the capability), and its
 * form that starts a checkout of the cart. Pages for a browser, left out of the OpenAPI documents.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { featureApi } from "../../platform/http/feature-api.ts"
import { CART_PAGE_PATH } from "../model/handoff-link.ts"

const Page = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" }))
const TokenPath = Schema.Struct({ token: Schema.String })

export class CartPageGroup extends HttpApiGroup.make("cartPage")
  .add(HttpApiEndpoint.get("view", `${CART_PAGE_PATH}/:token`).setPath(TokenPath).addSuccess(Page))
  .add(HttpApiEndpoint.post("checkout", `${CART_PAGE_PATH}/:token/checkout`).setPath(TokenPath).addSuccess(Page))
  .annotate(OpenApi.Exclude, true)
{}

export const CartPageApi = featureApi(CartPageGroup)
