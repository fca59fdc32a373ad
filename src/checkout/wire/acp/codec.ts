/** A wire codec of the Checkout Session API, one per served version: the domain knows no version. */
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

export interface RequestCodec<Input> {
  /** What the version's document declares and the body is decoded with. */
  readonly schema: Schema.Schema.AnyNoContext
  /** The first problem, unknown keys ignored; then the conversion. */
  readonly decode: (json: unknown) => Either.Either<Input, ParseResult.ParseError | WireRefusal>
}

export const requestCodec = <A, I, Input>(
  schema: Schema.Schema<A, I, never>,
  toInput: (decoded: A) => Either.Either<Input, WireRefusal>
): RequestCodec<Input> => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
  return { schema, decode: (json) => Either.flatMap(decode(json), toInput) }
}

export const asIs = <A extends Input, I, Input>(schema: Schema.Schema<A, I, never>): RequestCodec<Input> =>
  requestCodec(schema, (decoded: A) => Either.right<Input>(decoded))

export type CompletedSession = Session & { readonly order: OrderSummary }

export interface CheckoutCodec {
  readonly version: ApiVersionName
  readonly create: RequestCodec<CreateSessionInput>
  readonly update: RequestCodec<UpdateSessionInput>
  readonly complete: RequestCodec<CompleteSessionInput>
  /** For versions that define one; else a body sent is ignored. */
  readonly cancel: RequestCodec<CancelSessionInput> | undefined
  readonly session: { readonly schema: Schema.Schema.AnyNoContext; readonly encode: (session: Session) => unknown }
  readonly sessionWithOrder: {
    readonly schema: Schema.Schema.AnyNoContext
    readonly encode: (session: CompletedSession) => unknown
  }
  /** Complete's 200: the session with its order, or, with 3-D Secure, in `authentication_required`. */
  readonly completeResponse: Schema.Schema.AnyNoContext
  /** Whether the stored wire form, which the store serializes itself, is this version's session response. */
  readonly sessionIsStoredProjection: boolean
  /** A JSONPath of the domain (the interface document's field names) in this version's names. */
  readonly param: (path: string) => string
}
