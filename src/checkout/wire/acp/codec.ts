/**
 * A wire codec of the Checkout Session API: one per served version (`versions.ts`). It turns
 * the version's request bodies into the domain's inputs and the domain's sessions into the
 * version's responses, and names fields in the version's words; the domain knows no version.
 */
import { Data, Either, type ParseResult, Schema } from "effect"
import { type OrderSummary } from "../../../orders/model/order.ts"
import type { ApiVersionName } from "../../../shared/api-versions.ts"
import type {
  CancelSessionInput,
  CompleteSessionInput,
  CreateSessionInput,
  Session,
  UpdateSessionInput
} from "../../session/session.ts"

/** A request its version's schema accepts but this merchant cannot honour as sent → 400 at `param`. */
export class WireRefusal extends Data.TaggedError("WireRefusal")<{
  readonly code: "missing" | "invalid" | "unsupported"
  readonly message: string
  readonly param: string
}> {}

/** How a request body of one version becomes a domain input. */
export interface RequestCodec<Input> {
  /** The body's schema: what the version's document declares and the body is decoded with. */
  readonly schema: Schema.Schema.AnyNoContext
  /** Decodes a parsed body: the first problem, unknown keys ignored; then the conversion. */
  readonly decode: (json: unknown) => Either.Either<Input, ParseResult.ParseError | WireRefusal>
}

/** Builds a request codec (its decoder once) whose conversion sees the schema's decoded type. */
export const requestCodec = <A, I, Input>(
  schema: Schema.Schema<A, I, never>,
  toInput: (decoded: A) => Either.Either<Input, WireRefusal>
): RequestCodec<Input> => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return { schema, decode: (json) => Either.flatMap(decode(json), toInput) }
}

/** A request codec whose decoded body is already the domain input. */
export const asIs = <A extends Input, I, Input>(schema: Schema.Schema<A, I, never>): RequestCodec<Input> =>
  requestCodec(schema, (decoded: A) => Either.right<Input>(decoded))

export type CompletedSession = Session & { readonly order: OrderSummary }

export interface CheckoutCodec {
  readonly version: ApiVersionName
  readonly create: RequestCodec<CreateSessionInput>
  readonly update: RequestCodec<UpdateSessionInput>
  readonly complete: RequestCodec<CompleteSessionInput>
  /** The cancel body, for versions that define one (it is optional there); else a body sent is ignored. */
  readonly cancel: RequestCodec<CancelSessionInput> | undefined
  readonly session: { readonly schema: Schema.Schema.AnyNoContext; readonly encode: (session: Session) => unknown }
  readonly sessionWithOrder: {
    readonly schema: Schema.Schema.AnyNoContext
    readonly encode: (session: CompletedSession) => unknown
  }
  /**
   * What complete answers with 200: the session with its order, and in versions with 3-D Secure
   * also the session in `authentication_required`.
   */
  readonly completeResponse: Schema.Schema.AnyNoContext
  /**
   * Whether the stored projection of a session (its fields minus the internal ones, which the
   * store can serialize itself) is this version's session response, so GET can answer with it.
   */
  readonly sessionIsStoredProjection: boolean
  /** A JSONPath of the domain (the interface document's field names) in this version's names. */
  readonly param: (path: string) => string
}
