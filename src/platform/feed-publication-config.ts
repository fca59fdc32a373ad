/**
 * Where the merchant's products are published (`FEED_API_URL`, `docs/feeds.md`): the URL given; `off`,
 * nothing; unset, in development with the merchant (`checkout`) and the agent platform (`webhook_receiver`,
 * with API version 2026-04-17) in one process over plain HTTP, this process's own Feed API on the loopback
 * address with its first agent key, so that one process shows both ends (as `WEBHOOK_URL` defaults to its
 * own receiver); unset in production (or under TLS, whose certificate rarely names the loopback address),
 * nothing.
 */
import { Option, Redacted } from "effect"
import { selfBaseUrl } from "./self-base-url.ts"

export interface FeedPublicationConfig {
  /** `FEED_API_URL`: `http(s)://host[:port][/prefix]`, the routes being under `<url>/feeds`. */
  readonly apiUrl: string
  /** `FEED_API_KEY`: the bearer key the agent platform issued. */
  readonly apiKey: Redacted.Redacted<string>
  /** `FEED_TARGET_COUNTRY`: the market of the feed (ISO 3166-1 alpha-2), given when it is created. */
  readonly targetCountry: string | undefined
}

/** The value of `FEED_API_URL` that turns the publication off (any case). */
export const FEED_API_URL_OFF = "off"

export const isFeedApiUrlOff = (raw: string): boolean => raw.trim().toLowerCase() === FEED_API_URL_OFF

/** `off`, or an http(s) URL without query or fragment. */
export const feedApiUrlValid = (raw: string): boolean =>
  isFeedApiUrlOff(raw) || (/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(raw.trim()) && URL.canParse(raw.trim()))

export interface FeedPublicationInput {
  readonly apiUrl: Option.Option<string>
  readonly apiKey: Option.Option<string>
  readonly targetCountry: Option.Option<string>
  readonly production: boolean
  /**
   * This process is the merchant and hosts a Feed API it can call: the roles `checkout` and
   * `webhook_receiver` on, and 2026-04-17 (the Feed API's one version) among `API_VERSIONS`.
   */
  readonly bothEnds: boolean
  readonly tls: boolean
  readonly host: string
  readonly port: number
  /** The first of `API_KEYS` (given or generated): the hosted Feed API's owner of the feed. */
  readonly agentKey: string
}

/** The publication the variables ask for (`FEED_API_KEY` with a URL is checked by the caller). */
export const resolveFeedPublication = (input: FeedPublicationInput): Option.Option<FeedPublicationConfig> => {
  const targetCountry = Option.getOrUndefined(input.targetCountry)
  if (Option.isSome(input.apiUrl)) {
    if (isFeedApiUrlOff(input.apiUrl.value)) return Option.none()
    return Option.some({
      apiUrl: input.apiUrl.value.trim().replace(/\/+$/, ""),
      apiKey: Redacted.make(Option.getOrElse(input.apiKey, () => "").trim()),
      targetCountry
    })
  }
  if (input.production || !input.bothEnds || input.tls) return Option.none()
  return Option.some({
    apiUrl: selfBaseUrl(input.host, input.port, false),
    apiKey: Redacted.make(input.agentKey),
    targetCountry
  })
}
