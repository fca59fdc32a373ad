/**
 * The payment side of completing a checkout, in the three steps the checkout service runs so that
 * a checkout is charged exactly once (`docs/concurrency.md`):
 *
 * 1. `authorize`, inside the transaction that records the payment attempt: checks that the
 *    credential may pay for this session (for a `vt_` token: its allowance) and holds it for this
 *    session, so no other session can spend it meanwhile; a card that needs issuer authentication
 *    (3-D Secure) is refused until the request presents a result the provider confirms was made
 *    for this session, amount, currency, merchant and card, and that result is spent;
 * 2. `charge`, outside any transaction: the charge itself, keyed by the attempt's idempotency key —
 *    calling it again with the same key returns the first result, never a second charge;
 * 3. `release`, when the charge was declined, inside the transaction that records the decline:
 *    gives the credential back. A successful charge needs no third step: the credential stays
 *    held by the session it paid for.
 *
 * `settleCharge` says what a key's charge came to without charging, and closes a key under which
 * none was made, so that none ever will be: how a payment whose request died (or stalled) after
 * step 1 is settled when no retry comes (`checkout/payment-settlement.ts`). A request still on its
 * way to the charge then finds the key closed, instead of charging for a session the settlement
 * made payable again.
 */
import { Context, type Effect, type Either, type Option } from "effect"
import type { StorageError } from "../db/storage-error.ts"
import type {
  AuthenticationRequired,
  Charge,
  ChargeRequest,
  PaymentDeclined,
  PaymentRejected
} from "./model/payment.ts"

export interface PaymentProviderService {
  /** Whether the provider carries out 3-D Secure (asks for it, and charges with its result). */
  readonly threeDSecure: boolean
  readonly authorize: (
    request: ChargeRequest
  ) => Effect.Effect<void, PaymentRejected | AuthenticationRequired | StorageError>
  readonly charge: (request: ChargeRequest) => Effect.Effect<Charge, PaymentDeclined | PaymentRejected | StorageError>
  readonly release: (request: ChargeRequest) => Effect.Effect<void, StorageError>
  /**
   * The outcome of the charge made under the attempt's key; none if no charge was made under it,
   * and then none ever will be: a later `charge` under the key fails with `PaymentRejected`. Never
   * charges; atomic with a concurrent `charge` under the key (one of the two comes first).
   */
  readonly settleCharge: (
    attempt: { readonly idempotencyKey: string; readonly amount: number; readonly currency: string }
  ) => Effect.Effect<Option.Option<Either.Either<Charge, PaymentDeclined>>, StorageError>
}

export class PaymentProvider extends Context.Tag("acp/PaymentProvider")<PaymentProvider, PaymentProviderService>() {}
