/**
 * Every UCP request names its platform's profile (`UCP-Agent: profile="…"`, RFC 8941): the profile is
 * fetched (cached) and validated, and the capabilities both declare are intersected; the response
 * carries the ones relevant to its operation. A failure is answered as the overview's error table
 * says: a transport error for discovery (400, 424, 422), a UCP response for no common capability (200).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Data, Effect, Either } from "effect"
import { parseDictionary } from "../../shared/http-signatures/structured-fields.ts"
import {
  type ActiveCapabilities,
  intersectCapabilities,
  responseCapabilities,
  selectForRoot
} from "../negotiation/intersection.ts"
import type { ProfileFetcherShape } from "../profile-fetcher.ts"
import type { PlatformProfile } from "../profile/platform-profile.ts"
import { SERVED_CAPABILITIES, UCP_VERSION } from "../wire/ucp/v2026-04-08/extensions.ts"

/** An answer decided before the operation runs (a refusal, or a UCP outcome). */
export class UcpAnswer extends Data.TaggedError("UcpAnswer")<{
  readonly response: HttpServerResponse.HttpServerResponse
}> {}

export const protocolError = (status: number, code: string, content: string, path?: string) =>
  new UcpAnswer({
    response: HttpServerResponse.unsafeJson({ code, content, ...(path === undefined ? {} : { path }) }, { status })
  })

/** The profile URL of a `UCP-Agent` header, or why there is none. */
export const profileUrlOf = (header: string | undefined): Either.Either<string, string> => {
  if (header === undefined || header.trim() === "") return Either.left("The UCP-Agent header is required.")
  const parsed = parseDictionary(header)
  if (Either.isLeft(parsed)) return Either.left("The UCP-Agent header is not an RFC 8941 dictionary.")
  const member = parsed.right.get("profile")
  if (member === undefined || member._tag !== "Item" || member.value._tag !== "String") {
    return Either.left("The UCP-Agent header needs profile=\"<URL>\" as a string.")
  }
  return Either.right(member.value.value)
}

const BUSINESS_REGISTRY = Object.fromEntries(
  SERVED_CAPABILITIES.map((capability) => [capability.name, [{
    version: capability.version,
    ...(capability.extends === undefined ? {} : { extends: capability.extends })
  }]])
)

export interface Negotiated {
  readonly profileUrl: string
  readonly profile: PlatformProfile
  readonly version: string
  /** The active capabilities relevant to the operation's root. */
  readonly active: ActiveCapabilities
  readonly names: ReadonlyArray<string>
  readonly capabilities: ReturnType<typeof responseCapabilities>
}

/** A UCP response without a resource: `ucp.status` error and the messages saying why. */
export const outcomeWithoutResource = (
  capabilities: Readonly<Record<string, ReadonlyArray<{ readonly version: string }>>>,
  messages: ReadonlyArray<Record<string, unknown>>,
  continueUrl?: string
) =>
  HttpServerResponse.unsafeJson({
    ucp: { version: UCP_VERSION, status: "error", capabilities },
    messages,
    ...(continueUrl === undefined ? {} : { continue_url: continueUrl })
  })

export const negotiate = (
  profiles: ProfileFetcherShape,
  root: string,
  continueUrl: string
): Effect.Effect<Negotiated, UcpAnswer, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const url = profileUrlOf(request.headers["ucp-agent"])
    if (Either.isLeft(url)) return Effect.fail(protocolError(400, "invalid_profile_url", url.left))
    return profiles.fetch(url.right).pipe(
      Effect.mapError((error) => protocolError(error.httpStatus, error.code, error.message)),
      Effect.flatMap((profile) => {
        const active = selectForRoot(intersectCapabilities(BUSINESS_REGISTRY, profile.ucp.capabilities), root)
        const names = Object.keys(active)
        if (names.length === 0) {
          return Effect.fail(
            new UcpAnswer({
              response: outcomeWithoutResource({}, [{
                type: "error",
                code: "capabilities_incompatible",
                content: `The platform's profile and this business share no version of ${root}.`,
                severity: "unrecoverable"
              }], continueUrl)
            })
          )
        }
        return Effect.succeed({
          profileUrl: url.right,
          profile,
          version: profile.ucp.version,
          active,
          names,
          capabilities: responseCapabilities(active)
        })
      })
    )
  })
