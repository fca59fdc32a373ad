/** The UCP releases whose platform profiles this service reads, oldest first, and each one's decoder. */
import { type Either, type ParseResult, Schema } from "effect"
import type { PlatformProfile } from "../../profile/platform-profile.ts"
import * as V20260408 from "./v2026-04-08/profile.ts"

export const UCP_VERSIONS = [V20260408.VERSION] as const

export type UcpVersion = typeof UCP_VERSIONS[number]

export const isUcpVersion = (value: string): value is UcpVersion =>
  (UCP_VERSIONS as ReadonlyArray<string>).includes(value)

/** The first problem only: a hostile profile's every mistake is not worth describing. */
const firstError = { errors: "first" } as const

export const PROFILE_DECODERS: Record<
  UcpVersion,
  (input: unknown) => Either.Either<PlatformProfile, ParseResult.ParseError>
> = {
  "2026-04-08": Schema.decodeUnknownEither(V20260408.PlatformProfile, firstError)
}
