/** The payment side of completing a checkout, in steps that charge it exactly once (`docs/concurrency.md`). */
import { Context, type Effect, type Either, type Option } from "effect"
import type { PaymentHandler } from "../catalog/model/catalog.ts"
import type { StorageError } from "../db/storage-error.ts"
import type { HandlerSupport } from "./model/offered-catalog.ts"
import type {
  AuthenticationRequired,
  Charge,
  ChargeRequest,
  PaymentDeclined,
  PaymentPending,
  PaymentRejected,
  PendingCharge
} from "./model/payment.ts"

export interface PaymentProviderService {
  /** Whether the provider carries out 3-D Secure (asks for it, and charges with its result). */
  readonly threeDSecure: boolean
  /** Per handler, for a provider that routes by handler; every handler, as `threeDSecure` says, when absent. */
  readonly handlerSupport?: (handler: PaymentHandler) => HandlerSupport
  /** In the attempt's transaction: checks the credential and holds it for the session; spends a 3-D Secure result. */
  readonly authorize: (
    request: ChargeRequest
  ) => Effect.Effect<void, PaymentRejected | AuthenticationRequired | StorageError>
  /**
   * Outside any transaction; the same idempotency key returns the first result, never a second charge.
   * `PaymentPending`: not decided yet (the attempt stays pending; a retry or the settlement decides it).
   * `AuthenticationRequired`: the issuer asks for 3-D Secure, learned only by trying; the provider has
   * made sure nothing can be charged under the key, so the attempt ends without a charge.
   */
  readonly charge: (
    request: ChargeRequest
  ) => Effect.Effect<Charge, PaymentDeclined | PaymentRejected | PaymentPending | AuthenticationRequired | StorageError>
  /** After a decline, in its transaction: gives the credential back (a paid session keeps it). */
  readonly release: (request: ChargeRequest) => Effect.Effect<void, StorageError>
  /**
   * The key's charge; none closes the key (a later `charge` is rejected). Never charges; atomic with `charge`.
   * Outside any transaction (its answer is applied under the session's lock afterwards), so calls for one key
   * may overlap, with each other and with its `charge`: every call answers the key's one charge, or every
   * call none (a decline may read as none to a call after another closed the key), so whichever applies
   * first applies the outcome. The built-in processor: one conditional insert, the key's first record kept;
   * Stripe: the key's row, then the PaymentIntent under Stripe's idempotency keys and its own state order.
   * `PaymentPending`: the provider cannot say yet (the attempt stays pending for a later settlement). A decline
   * `authentication_unavailable`: the issuer asked for 3-D Secure (the request decides how the session waits).
   */
  readonly settleCharge: (
    attempt: PendingCharge
  ) => Effect.Effect<Option.Option<Either.Either<Charge, PaymentDeclined>>, PaymentPending | StorageError>
}

export class PaymentProvider extends Context.Tag("acp/PaymentProvider")<PaymentProvider, PaymentProviderService>() {}
