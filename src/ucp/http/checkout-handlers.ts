/**
 * The UCP REST checkout on the checkout core: the same reducer, pricing, stock, payments and idempotency
 * as ACP, in UCP 2026-04-08's format. Each request is negotiated first (`negotiation.ts`); a session is
 * created and driven in one protocol (its id says which): another's session is not found here.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, ParseResult, Schema } from "effect"
import { Catalog } from "../../catalog/catalog-service.ts"
import { CheckoutService } from "../../checkout/checkout-service.ts"
import { type Session, sessionProtocol } from "../../checkout/session/session.ts"
import { AppConfig } from "../../platform/config.ts"
import { BadRequest, NotFound, type PayloadTooLarge } from "../../platform/http/errors.ts"
import { groupHandlers } from "../../platform/http/group-context.ts"
import {
  badRequestFromParseError,
  readJson,
  readOptionalJson,
  unstorableTextError
} from "../../platform/http/request-body.ts"
import { requireRole } from "../../platform/http/route-guards.ts"
import { maskCardNumbers } from "../../shared/card-numbers.ts"
import { ProfileFetcher } from "../profile-fetcher.ts"
import { UcpSigningKeys } from "../signing-keys.ts"
import type { WireRefusal } from "../wire/ucp/codec.ts"
import { paymentHandlers } from "../wire/ucp/v2026-04-08/business-profile.ts"
import { completeInput, createInput, updateInput } from "../wire/ucp/v2026-04-08/checkout-inputs.ts"
import {
  CompleteCheckoutRequest,
  CreateCheckoutRequest,
  UpdateCheckoutRequest
} from "../wire/ucp/v2026-04-08/checkout-requests.ts"
import { encodeCheckout } from "../wire/ucp/v2026-04-08/checkout-responses.ts"
import { activeExtensions, CHECKOUT, UCP_VERSION } from "../wire/ucp/v2026-04-08/extensions.ts"
import { UcpCheckoutApi } from "./api.ts"
import { failureAnswer, type UcpCheckoutFailure, type UcpProtocolError } from "./checkout-outcomes.ts"
import { negotiate, type Negotiated, outcomeWithoutResource, UcpAnswer } from "./negotiation.ts"
import { signedResponse } from "./response-signing.ts"

const firstProblem = { errors: "first", onExcessProperty: "ignore" } as const

const decodeBody = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, firstProblem)
  return Effect.flatMap(readJson, (json): Either.Either<A, BadRequest> => {
    const unstorable = unstorableTextError(json)
    if (unstorable !== undefined) return Either.left(unstorable)
    return Either.mapLeft(decode(json), (error: ParseResult.ParseError) => badRequestFromParseError(error))
  })
}

const refused = (refusal: WireRefusal) =>
  new BadRequest({ type: "invalid_request", code: refusal.code, message: refusal.message, param: refusal.param })

const fromWire = <A>(decoded: Either.Either<A, WireRefusal>): Either.Either<A, BadRequest> =>
  Either.mapLeft(decoded, refused)

/** ACP's sessions are not UCP's: the same answer as an unknown id, saying where it lives. */
const ownSession = (id: string): Effect.Effect<void, NotFound> =>
  sessionProtocol(id) === "ucp" ? Effect.void : Effect.fail(
    new NotFound({
      type: "invalid_request",
      code: "not_found",
      message: `No UCP checkout session ${
        maskCardNumbers(id)
      }; a session created over ACP is read at /checkout_sessions/{id}.`,
      param: "$.id"
    })
  )

export const UcpCheckoutHandlers = groupHandlers(
  UcpCheckoutApi,
  "ucpCheckout",
  Effect.fnUntraced(function*(handlers) {
    const checkout = yield* CheckoutService
    const catalog = yield* Catalog
    const profiles = yield* ProfileFetcher
    const config = yield* AppConfig
    const base = config.publicBaseUrl.replace(/\/$/, "")
    const handlerContext = { publicBaseUrl: base, merchantId: config.merchantId, production: config.production }
    const gate = requireRole(config, "checkout")
    const signed = signedResponse(yield* UcpSigningKeys)

    const answer = (session: Session, negotiated: Negotiated, status: 200 | 201 = 200) => {
      const snapshot = catalog.latest()
      const titles = new Map([...snapshot.products.values()].map((product) => [product.id, product.title]))
      const body = encodeCheckout(session, {
        envelope: {
          version: UCP_VERSION,
          status: "success",
          capabilities: negotiated.capabilities,
          payment_handlers: paymentHandlers(snapshot.paymentHandlers, handlerContext)
        },
        active: activeExtensions(negotiated.names),
        titles,
        continueUrl: undefined
      })
      return HttpServerResponse.unsafeJson(body, { status })
    }

    /** Runs an operation negotiated for checkout; its business outcomes and early answers become responses. */
    const operation = <E extends UcpCheckoutFailure | BadRequest | NotFound | PayloadTooLarge, R>(
      creating: boolean,
      run: (negotiated: Negotiated) => Effect.Effect<HttpServerResponse.HttpServerResponse, E | UcpAnswer, R>
    ): Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      UcpProtocolError | PayloadTooLarge,
      R | HttpServerRequest.HttpServerRequest
    > =>
      gate.pipe(
        Effect.zipRight(negotiate(profiles, CHECKOUT, base)),
        Effect.flatMap((negotiated) =>
          Effect.catchAll(run(negotiated), (
            error: E | UcpAnswer
          ): Effect.Effect<HttpServerResponse.HttpServerResponse, UcpProtocolError | PayloadTooLarge> => {
            switch (error._tag) {
              case "UcpAnswer":
                return Effect.succeed(error.response)
              case "BadRequest":
              case "NotFound":
              case "PayloadTooLarge":
                return Effect.fail(error as BadRequest | NotFound | PayloadTooLarge)
              default:
                return failureAnswer(error as UcpCheckoutFailure, negotiated.capabilities, creating)
            }
          })
        ),
        Effect.catchTag("UcpAnswer", (early) => Effect.succeed(early.response))
      )

    /** Physical goods need an address, which only the fulfillment extension carries by API. */
    const shipsWithoutFulfillment = (negotiated: Negotiated, itemIds: ReadonlyArray<string>) => {
      if (activeExtensions(negotiated.names).fulfillment) return undefined
      const products = catalog.latest().products
      const index = itemIds.findIndex((id) => products.get(id)?.kind === "physical")
      return index < 0 ? undefined : index
    }

    const create = Effect.fnUntraced(function*(negotiated: Negotiated) {
      const body = yield* decodeBody(CreateCheckoutRequest)
      const input = yield* fromWire(createInput(body, activeExtensions(negotiated.names)))
      const physical = shipsWithoutFulfillment(negotiated, input.items.map((item) => item.id))
      if (physical !== undefined) {
        return outcomeWithoutResource(negotiated.capabilities, [{
          type: "error",
          code: "fulfillment_required",
          path: `$.line_items[${physical}]`,
          content:
            "This item ships: negotiate the fulfillment extension (dev.ucp.shopping.fulfillment) to give an address.",
          severity: "unrecoverable"
        }])
      }
      const session = yield* checkout.create({
        ...input,
        details: { ...input.details, agent_profile: negotiated.profileUrl }
      })
      return answer(session, negotiated, 201)
    })

    const update = Effect.fnUntraced(function*(negotiated: Negotiated, id: string) {
      yield* ownSession(id)
      const body = yield* decodeBody(UpdateCheckoutRequest)
      if (body.id !== undefined && body.id !== id) {
        return yield* new BadRequest({
          type: "invalid_request",
          code: "invalid",
          message: "$.id, if given, must be the path's checkout session id.",
          param: "$.id"
        })
      }
      const input = yield* fromWire(updateInput(body, activeExtensions(negotiated.names)))
      return answer(yield* checkout.update(id, input), negotiated)
    })

    const complete = Effect.fnUntraced(function*(negotiated: Negotiated, id: string) {
      yield* ownSession(id)
      const body = yield* decodeBody(CompleteCheckoutRequest)
      const input = yield* fromWire(completeInput(body))
      return answer(yield* checkout.complete(id, input), negotiated)
    })

    const cancel = Effect.fnUntraced(function*(negotiated: Negotiated, id: string) {
      yield* ownSession(id)
      // The release defines no cancel body: one sent is held to the common rules only.
      yield* readOptionalJson
      return answer(yield* checkout.cancel(id), negotiated)
    })

    return handlers
      .handleRaw("create", () => operation(true, create))
      .handle("get", ({ path }) =>
        operation(false, (negotiated) =>
          Effect.zipRight(
            ownSession(path.id),
            Effect.map(checkout.get(path.id), (session) => answer(session, negotiated))
          )))
      .handleRaw("update", ({ path }) => operation(false, (negotiated) => update(negotiated, path.id)))
      .handleRaw(
        "complete",
        ({ path }) => Effect.flatMap(operation(false, (negotiated) => complete(negotiated, path.id)), signed)
      )
      .handleRaw("cancel", ({ path }) => operation(false, (negotiated) => cancel(negotiated, path.id)))
  })
)
