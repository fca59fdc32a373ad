/** Coupons and sessions shared by the discount tests. */
import { Either } from "effect"
import { type CatalogCoupon } from "../../src/catalog/model/coupons.ts"
import { reduce } from "../../src/checkout/session/reducer.ts"
import type { CheckoutSessionCreateRequest } from "../../src/checkout/session/schemas.ts"
import { type ReducerContext, type Session, SessionCommand } from "../../src/checkout/session/session.ts"
import { context } from "../support/fixtures.ts"

export const percent = (code: string, percent_off: number, extra: Partial<CatalogCoupon> = {}): CatalogCoupon => ({
  id: `c_${code.toLowerCase()}`,
  name: code,
  code,
  percent_off,
  ...extra
})
export const amount = (code: string, amount_off: number, extra: Partial<CatalogCoupon> = {}): CatalogCoupon => ({
  id: `c_${code.toLowerCase()}`,
  name: code,
  code,
  amount_off,
  currency: "usd",
  ...extra
})

export const create = (request: CheckoutSessionCreateRequest, ctx: ReducerContext = context()): Session =>
  Either.getOrThrow(reduce(undefined, SessionCommand.Create({ id: "cs_disc", request }), ctx)).session

export const amountOf = (session: Session, type: string) => session.totals.find((t) => t.type === type)?.amount
