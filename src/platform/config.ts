/**
 * Configuration from the environment (CONTRACT §2). Missing secrets are generated once into
 * `DATA_DIR/secrets.json` (mode 0600); `NODE_ENV=production` requires them and `WEBHOOK_RECEIVER_SECRETS`.
 * Agent keys (`API_KEYS`) and merchant keys (`MERCHANT_API_KEYS`) are two disjoint lists.
 */
import { Config, ConfigError, Context, Effect, Either, LogLevel, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { API_VERSION_NAMES, type ApiVersionName, isApiVersionName } from "../shared/api-versions.ts"
import {
  feedApiUrlValid,
  type FeedPublicationConfig,
  isFeedApiUrlOff,
  resolveFeedPublication
} from "./feed-publication-config.ts"
import { type StripeConfig, stripeConfig } from "./stripe-config.ts"
import { type UcpConfig, ucpConfig } from "./ucp-config.ts"
import { generateSigningKey, resolveUcpSigning, type UcpSigningConfig, ucpSigningConfig } from "./ucp-signing-config.ts"

export type { FeedPublicationConfig } from "./feed-publication-config.ts"
export { parseStripeApiBase, STRIPE_API_BASE_DEFAULT, type StripeConfig } from "./stripe-config.ts"
export { type AllowedProfileHost, parseAllowedProfileHost, UCP_PROFILE_DEFAULTS, type UcpConfig } from "./ucp-config.ts"

export type Role =
  | "checkout"
  | "delegate"
  | "delegate_authentication"
  | "mcp"
  | "webhook_receiver"
  | "webhook_sender"
export const ALL_ROLES: ReadonlyArray<Role> = [
  "checkout",
  "delegate",
  "delegate_authentication",
  "mcp",
  "webhook_receiver",
  "webhook_sender"
]

export const DEFAULT_API_VERSIONS: ReadonlyArray<ApiVersionName> = API_VERSION_NAMES

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly production: boolean
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly databasePoolSize: number
  readonly databasePreparedStatements: boolean
  /** Server processes on this host (`WORKERS`), forked by one primary; they share the port and database. */
  readonly workers: number
  readonly dataDir: string
  /** Agent keys (`API_KEYS`): checkout, delegate payment and authentication, MCP, the received orders. */
  readonly apiKeys: ReadonlyArray<Redacted.Redacted<string>>
  /** Merchant keys (`MERCHANT_API_KEYS`): the order and delivery routes, the console; never also an agent key. */
  readonly merchantApiKeys: ReadonlyArray<Redacted.Redacted<string>>
  readonly merchantId: string
  readonly publicBaseUrl: string
  readonly catalogFile: Option.Option<string>
  /** Accepted API-Version dates, newest first. */
  readonly apiVersions: ReadonlyArray<ApiVersionName>
  /** The version order events are posted in (`WEBHOOK_API_VERSION`; default the newest accepted). */
  readonly webhookApiVersion: ApiVersionName
  readonly webhookUrl: Option.Option<string>
  readonly webhookSecret: Redacted.Redacted<string>
  readonly webhookReceiverSecrets: ReadonlyArray<Redacted.Redacted<string>>
  readonly webhookToleranceSeconds: number
  /** How long the sender keeps retrying an order event after its first attempt, then dead-letters it. */
  readonly webhookRetryHorizonSeconds: number
  /** Requests per minute per source address accepted by the webhook receiver. */
  readonly webhookReceiverRateLimitPerMinute: number
  /** Requests per minute per API key on the hosted Feed API (`/feeds…`). */
  readonly feedRateLimitPerMinute: number
  /**
   * The agent-hosted Feed API the merchant's products are published to: `FEED_API_URL` and its key, or by
   * default in development this process's own (`feed-publication-config.ts`); none with `FEED_API_URL=off`.
   */
  readonly feedPublication: Option.Option<FeedPublicationConfig>
  readonly vaultKey: Redacted.Redacted<string>
  /** `VAULT_RETIRED_KEYS`: they open the cards they sealed, so tokens outlive a key rotation, but seal nothing. */
  readonly retiredVaultKeys: ReadonlyArray<Redacted.Redacted<string>>
  readonly sessionTtlSeconds: number
  /** Idle time after which a cart expires (refreshed by each update). */
  readonly cartTtlSeconds: number
  readonly idempotencyTtlSeconds: number
  readonly requestSigningSecrets: ReadonlyArray<Redacted.Redacted<string>>
  readonly tls: Option.Option<{ readonly certFile: string; readonly keyFile: string }>
  readonly httpKeepAliveTimeoutSeconds: number
  readonly logLevel: LogLevel.LogLevel
  readonly roles: ReadonlySet<Role>
  /** Requests per minute per API key on the delegate payment route. */
  readonly delegateRateLimitPerMinute: number
  /** The Stripe account payments through a `stripe` handler are made with (`docs/payments.md`, "Stripe"). */
  readonly stripe: StripeConfig
  /** The keys UCP messages are signed with, all published (`ucp-signing-config.ts`). */
  readonly ucpSigning: UcpSigningConfig
  /** The UCP platform-profile fetcher: hosts allowed over http and to private addresses, its limits. */
  readonly ucp: UcpConfig
  /** Secrets generated at this start (to print once), by name. */
  readonly generated: ReadonlyArray<{ readonly name: string; readonly value: string; readonly file: string }>
}

export class AppConfig extends Context.Tag("acp/AppConfig")<AppConfig, AppConfigShape>() {}

const splitList = (raw: string): Array<string> => raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0)

const list = (name: string) => Config.string(name).pipe(Config.map(splitList), Config.option)

// Validated on the variable itself, before any default or mapping: a later check loses the variable's name.
const checkedList = (
  name: string,
  fallback: string,
  check: { readonly message: string; readonly validation: (items: ReadonlyArray<string>) => boolean }
) =>
  Config.string(name).pipe(
    Config.validate({ message: check.message, validation: (raw) => check.validation(splitList(raw)) }),
    Config.withDefault(fallback),
    Config.map(splitList)
  )

const checkedInt = (name: string, fallback: number, message: string, validation: (n: number) => boolean) =>
  Config.integer(name).pipe(Config.validate({ message, validation }), Config.withDefault(fallback))

const positiveInt = (name: string, fallback: number) =>
  checkedInt(name, fallback, "Expected a positive integer", (n) => n > 0)

/** Above proxies' usual 60 s idle timeout, so that they close idle connections first and no request meets a reset. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS = 65
/** The headers timeout is this plus 5 s, which must stay under Node's 300 s request timeout. */
export const MAX_KEEP_ALIVE_TIMEOUT_SECONDS = 290

const servedVersions = API_VERSION_NAMES.join(", ")

const apiVersions = checkedList("API_VERSIONS", DEFAULT_API_VERSIONS.join(","), {
  message: `Expected a comma-separated subset of the served versions ${servedVersions}`,
  validation: (versions) => versions.length > 0 && versions.every(isApiVersionName)
}).pipe(Config.map((versions) => [...new Set(versions as Array<ApiVersionName>)].sort().reverse()))

const webhookApiVersion = Config.option(
  Config.string("WEBHOOK_API_VERSION").pipe(
    Config.validate({ message: `Expected one of the served versions ${servedVersions}`, validation: isApiVersionName })
  )
)

const roles = checkedList("ROLES", ALL_ROLES.join(","), {
  message: `Expected a comma-separated subset of ${ALL_ROLES.join(", ")}`,
  validation: (names) => names.length > 0 && names.every((n) => (ALL_ROLES as ReadonlyArray<string>).includes(n))
}).pipe(Config.map((names) => new Set(names as Array<Role>)))

const logLevel = Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))

const vaultKeyValid = (value: string) =>
  /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, "base64").length === 32

const raw = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  nodeEnv: Config.string("NODE_ENV").pipe(Config.withDefault("development")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  databasePoolSize: positiveInt("DATABASE_POOL_SIZE", 10),
  databasePreparedStatements: Config.boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  workers: positiveInt("WORKERS", 1),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  apiKeys: list("API_KEYS"),
  merchantApiKeys: list("MERCHANT_API_KEYS"),
  merchantId: Config.string("MERCHANT_ID").pipe(
    Config.validate({ message: "Expected a non-empty merchant id", validation: (s) => s.trim().length > 0 }),
    Config.withDefault("merchant_demo")
  ),
  publicBaseUrl: Config.option(
    Config.string("PUBLIC_BASE_URL").pipe(
      Config.validate({ message: "Expected an http(s) URL", validation: (s) => /^https?:\/\/[^\s]+$/.test(s) })
    )
  ),
  catalogFile: Config.option(Config.string("CATALOG_FILE")),
  apiVersions,
  webhookApiVersion,
  webhookUrl: Config.option(
    Config.string("WEBHOOK_URL").pipe(
      Config.validate({ message: "Expected an http(s) URL", validation: (s) => /^https?:\/\/[^\s]+$/.test(s) })
    )
  ),
  webhookSecret: Config.option(Config.string("WEBHOOK_SECRET")),
  webhookReceiverSecrets: list("WEBHOOK_RECEIVER_SECRETS"),
  webhookToleranceSeconds: positiveInt("WEBHOOK_TOLERANCE_SECONDS", 300),
  webhookRetryHorizonSeconds: positiveInt("WEBHOOK_RETRY_HORIZON_SECONDS", 86400),
  webhookReceiverRateLimitPerMinute: positiveInt("WEBHOOK_RECEIVER_RATE_LIMIT_PER_MINUTE", 600),
  feedRateLimitPerMinute: positiveInt("FEED_RATE_LIMIT_PER_MINUTE", 600),
  feedApiUrl: Config.option(
    Config.string("FEED_API_URL").pipe(
      Config.validate({
        message: "Expected an http(s) URL of the agent's Feed API (its routes under <url>/feeds), or off",
        validation: feedApiUrlValid
      })
    )
  ),
  feedApiKey: Config.option(Config.string("FEED_API_KEY")),
  feedTargetCountry: Config.option(
    Config.string("FEED_TARGET_COUNTRY").pipe(
      Config.validate({
        message: "Expected an ISO 3166-1 alpha-2 code, e.g. US",
        validation: (c) => /^[A-Z]{2}$/.test(c)
      })
    )
  ),
  vaultKey: Config.option(
    Config.string("VAULT_KEY").pipe(
      Config.validate({ message: "Expected base64 of exactly 32 bytes", validation: vaultKeyValid })
    )
  ),
  retiredVaultKeys: checkedList("VAULT_RETIRED_KEYS", "", {
    message: "Expected comma-separated base64 keys of exactly 32 bytes each",
    validation: (keys) => keys.every(vaultKeyValid)
  }),
  sessionTtlSeconds: positiveInt("SESSION_TTL_SECONDS", 21600),
  cartTtlSeconds: positiveInt("CART_TTL_SECONDS", 604800),
  idempotencyTtlSeconds: positiveInt("IDEMPOTENCY_TTL_SECONDS", 86400),
  requestSigningSecrets: list("REQUEST_SIGNING_SECRETS"),
  tlsCertFile: Config.option(Config.string("TLS_CERT_FILE")),
  tlsKeyFile: Config.option(Config.string("TLS_KEY_FILE")),
  httpKeepAliveTimeoutSeconds: checkedInt(
    "HTTP_KEEP_ALIVE_TIMEOUT_SECONDS",
    DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS,
    `Expected an integer from 1 to ${MAX_KEEP_ALIVE_TIMEOUT_SECONDS}`,
    (n) => n >= 1 && n <= MAX_KEEP_ALIVE_TIMEOUT_SECONDS
  ),
  logLevel,
  roles,
  delegateRateLimitPerMinute: positiveInt("DELEGATE_RATE_LIMIT_PER_MINUTE", 120),
  stripe: stripeConfig,
  ucpSigning: ucpSigningConfig,
  ucp: ucpConfig
})

type Raw = Config.Config.Success<typeof raw>

const loadOrCreateSecrets = (dataDir: string, wanted: ReadonlyArray<{ name: string; make: () => string }>) => {
  const file = join(dataDir, "secrets.json")
  const stored: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {}
  const generated: Array<{ name: string; value: string; file: string }> = []
  for (const { make, name } of wanted) {
    if (typeof stored[name] !== "string") {
      stored[name] = make()
      generated.push({ name, value: stored[name], file })
    }
  }
  if (generated.length > 0) {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, JSON.stringify(stored, null, 2) + "\n", { mode: 0o600 })
    chmodSync(file, 0o600)
  }
  return { stored, generated }
}

const nonEmpty = (keys: Option.Option<ReadonlyArray<string>>) => Option.filter(keys, (list) => list.length > 0)
const isEmpty = (keys: Option.Option<ReadonlyArray<string>>) => Option.isNone(nonEmpty(keys))

const fail = (path: string, message: string) => Effect.fail(ConfigError.InvalidData([path], message))

export const resolveConfig = Effect.fnUntraced(
  function*(env: Raw): Effect.fn.Return<AppConfigShape, ConfigError.ConfigError> {
    const production = env.nodeEnv === "production"
    if (production) {
      const missing = [
        isEmpty(env.apiKeys) ? "API_KEYS" : undefined,
        isEmpty(env.merchantApiKeys) ? "MERCHANT_API_KEYS" : undefined,
        Option.isNone(env.vaultKey) ? "VAULT_KEY" : undefined,
        Option.isNone(env.webhookSecret) ? "WEBHOOK_SECRET" : undefined,
        Option.isNone(env.ucpSigning.keys) ? "UCP_SIGNING_KEYS" : undefined,
        Option.isNone(env.webhookReceiverSecrets) || env.webhookReceiverSecrets.value.length === 0
          ? "WEBHOOK_RECEIVER_SECRETS"
          : undefined
      ].filter((name): name is string => name !== undefined)
      if (missing.length > 0) {
        return yield* fail(missing[0]!, `NODE_ENV=production requires ${missing.join(", ")} to be set`)
      }
    }
    const feedApiUrl = Option.filter(env.feedApiUrl, (url) => !isFeedApiUrlOff(url))
    if (Option.isSome(feedApiUrl) && Option.isNone(Option.filter(env.feedApiKey, (key) => key.trim() !== ""))) {
      return yield* fail("FEED_API_KEY", "FEED_API_URL needs FEED_API_KEY, the key the agent platform issued")
    }
    if (Option.isSome(env.tlsCertFile) !== Option.isSome(env.tlsKeyFile)) {
      return yield* fail(
        Option.isSome(env.tlsCertFile) ? "TLS_KEY_FILE" : "TLS_CERT_FILE",
        "TLS_CERT_FILE and TLS_KEY_FILE must be set together"
      )
    }
    if (env.workers > 1 && Option.isNone(Option.filter(env.databaseUrl, (url) => Redacted.value(url).trim() !== ""))) {
      return yield* fail(
        "WORKERS",
        "WORKERS above 1 needs DATABASE_URL: the embedded store serves one connection, so one process"
      )
    }
    const wanted: Array<{ name: string; make: () => string }> = []
    if (isEmpty(env.apiKeys)) {
      wanted.push({ name: "api_key", make: () => `sk_test_${randomBytes(24).toString("base64url")}` })
    }
    if (isEmpty(env.merchantApiKeys)) {
      wanted.push({ name: "merchant_api_key", make: () => `mk_test_${randomBytes(24).toString("base64url")}` })
    }
    if (Option.isNone(env.vaultKey)) wanted.push({ name: "vault_key", make: () => randomBytes(32).toString("base64") })
    if (Option.isNone(env.webhookSecret)) {
      wanted.push({ name: "webhook_secret", make: () => `whsec_${randomBytes(24).toString("base64url")}` })
    }
    if (Option.isNone(env.ucpSigning.keys)) wanted.push({ name: "ucp_signing_key", make: generateSigningKey })
    const secrets = wanted.length === 0
      ? { stored: {} as Record<string, string>, generated: [] }
      : yield* Effect.try({
        try: () => loadOrCreateSecrets(env.dataDir, wanted),
        catch: (e) =>
          ConfigError.InvalidData(["DATA_DIR"], `Cannot keep generated secrets under DATA_DIR: ${String(e)}`)
      })
    const apiKeys = Option.getOrElse(nonEmpty(env.apiKeys), () => [secrets.stored.api_key!])
    const merchantApiKeys = Option.getOrElse(nonEmpty(env.merchantApiKeys), () => [secrets.stored.merchant_api_key!])
    // The kind of a key decides what it may do: one key of both kinds would give an agent the merchant's routes.
    if (merchantApiKeys.some((key) => apiKeys.includes(key))) {
      return yield* fail(
        "MERCHANT_API_KEYS",
        "A key is in both API_KEYS and MERCHANT_API_KEYS: agent and merchant keys must differ"
      )
    }
    const webhookSecret = Option.getOrElse(env.webhookSecret, () => secrets.stored.webhook_secret!)
    const ucpSigning = resolveUcpSigning(env.ucpSigning, secrets.stored.ucp_signing_key)
    if (Either.isLeft(ucpSigning)) return yield* fail(ucpSigning.left.variable, ucpSigning.left.message)
    const receiverSecrets = Option.isSome(env.webhookReceiverSecrets) && env.webhookReceiverSecrets.value.length > 0
      ? env.webhookReceiverSecrets.value
      : [webhookSecret]
    const host = env.host
    const scheme = Option.isSome(env.tlsCertFile) ? "https" : "http"
    const publicBaseUrl = Option.getOrElse(
      env.publicBaseUrl,
      () => `${scheme}://${host === "0.0.0.0" || host === "::" ? "localhost" : host}:${env.port}`
    ).replace(/\/+$/, "")
    return {
      port: env.port,
      host,
      production,
      databaseUrl: Option.filter(env.databaseUrl, (url) => Redacted.value(url).trim() !== ""),
      databasePoolSize: env.databasePoolSize,
      databasePreparedStatements: env.databasePreparedStatements,
      workers: env.workers,
      dataDir: env.dataDir,
      apiKeys: apiKeys.map((k) => Redacted.make(k)),
      merchantApiKeys: merchantApiKeys.map((k) => Redacted.make(k)),
      merchantId: env.merchantId,
      publicBaseUrl,
      catalogFile: env.catalogFile,
      apiVersions: env.apiVersions,
      webhookApiVersion: Option.getOrElse(
        env.webhookApiVersion as Option.Option<ApiVersionName>,
        () => env.apiVersions[0]!
      ),
      webhookUrl: env.webhookUrl,
      webhookSecret: Redacted.make(webhookSecret),
      webhookReceiverSecrets: receiverSecrets.map((s) => Redacted.make(s)),
      webhookToleranceSeconds: env.webhookToleranceSeconds,
      webhookRetryHorizonSeconds: env.webhookRetryHorizonSeconds,
      webhookReceiverRateLimitPerMinute: env.webhookReceiverRateLimitPerMinute,
      feedRateLimitPerMinute: env.feedRateLimitPerMinute,
      feedPublication: resolveFeedPublication({
        apiUrl: env.feedApiUrl,
        apiKey: env.feedApiKey,
        targetCountry: env.feedTargetCountry,
        production,
        bothEnds: env.roles.has("checkout") && env.roles.has("webhook_receiver") &&
          env.apiVersions.includes("2026-04-17"),
        tls: Option.isSome(env.tlsCertFile),
        host,
        port: env.port,
        agentKey: apiKeys[0]!
      }),
      vaultKey: Redacted.make(Option.getOrElse(env.vaultKey, () => secrets.stored.vault_key!)),
      retiredVaultKeys: env.retiredVaultKeys.map((k) => Redacted.make(k)),
      sessionTtlSeconds: env.sessionTtlSeconds,
      cartTtlSeconds: env.cartTtlSeconds,
      idempotencyTtlSeconds: env.idempotencyTtlSeconds,
      requestSigningSecrets: Option.getOrElse(env.requestSigningSecrets, () => []).map((s) => Redacted.make(s)),
      tls: Option.isSome(env.tlsCertFile) && Option.isSome(env.tlsKeyFile)
        ? Option.some({ certFile: env.tlsCertFile.value, keyFile: env.tlsKeyFile.value })
        : Option.none(),
      httpKeepAliveTimeoutSeconds: env.httpKeepAliveTimeoutSeconds,
      logLevel: env.logLevel,
      roles: env.roles,
      delegateRateLimitPerMinute: env.delegateRateLimitPerMinute,
      stripe: env.stripe,
      ucpSigning: ucpSigning.right,
      ucp: env.ucp,
      generated: secrets.generated
    }
  }
)

export const loadConfig: Effect.Effect<AppConfigShape, ConfigError.ConfigError> = Effect.flatMap(raw, resolveConfig)

export const describeConfigError = (error: ConfigError.ConfigError): string =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, l: string, r: string) => `${l}\n${r}`,
    orCase: (_, l: string, r: string) => `${l}\n${r}`,
    invalidDataCase: (_, path, message) => `${path.join(".")}: ${message}`,
    missingDataCase: (_, path, message) => `${path.join(".")}: ${message}`,
    sourceUnavailableCase: (_, path, message) => `${path.join(".")}: ${message}`,
    unsupportedCase: (_, path, message) => `${path.join(".")}: ${message}`
  })
