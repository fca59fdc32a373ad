/** Plain configuration for tests: every field given, nothing read from the environment. */
import { LogLevel, Option, Redacted } from "effect"
import {
  ALL_ROLES,
  type AppConfigShape,
  DEFAULT_API_VERSIONS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS
} from "../../src/platform/config.ts"

/** The merchant's routes (orders, order-event deliveries): every other authenticated route takes an agent key. */
export const isMerchantPath = (path: string): boolean =>
  /^\/(orders|products|feed-publication|webhooks\/(deliveries|metrics))(\/|\?|$)/.test(path)

/** The tests' UCP signing key (a private JWK made for them only). */
export const TEST_UCP_SIGNING_KEY = {
  kty: "EC",
  crv: "P-256",
  x: "8Kl9HP9qDYHEkMpq4lybrajdy4FYHGWgYpUOsvz6ETE",
  y: "JdjUJOPlu_5deUvRRzdQbZ7IQQEwwbp9yhFHxKFayhg",
  d: "mfLwsdSWbeVSqq2dzE729T5WcU77oyc2A4LfySHNioA",
  kid: "test_key_1",
  alg: "ES256",
  use: "sig"
} as const

export const testConfig = (overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
  port: 0,
  host: "127.0.0.1",
  production: false,
  databaseUrl: Option.none(),
  databasePoolSize: 10,
  databasePreparedStatements: true,
  workers: 1,
  dataDir: "./data-test",
  apiKeys: [Redacted.make("sk_test_key")],
  merchantApiKeys: [Redacted.make("mk_test_key")],
  merchantId: "merchant_test",
  publicBaseUrl: "https://merchant.test",
  catalogFile: Option.none(),
  apiVersions: [...DEFAULT_API_VERSIONS].reverse(),
  webhookApiVersion: "2025-09-29",
  webhookUrl: Option.none(),
  webhookSecret: Redacted.make("whsec_test"),
  webhookReceiverSecrets: [Redacted.make("whsec_test")],
  webhookToleranceSeconds: 300,
  webhookRetryHorizonSeconds: 86400,
  webhookReceiverRateLimitPerMinute: 600,
  feedRateLimitPerMinute: 600,
  feedPublication: Option.none(),
  vaultKey: Redacted.make(Buffer.alloc(32, 7).toString("base64")),
  retiredVaultKeys: [],
  sessionTtlSeconds: 21600,
  cartTtlSeconds: 604800,
  idempotencyTtlSeconds: 86400,
  requestSigningSecrets: [],
  tls: Option.none(),
  httpKeepAliveTimeoutSeconds: DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS,
  logLevel: LogLevel.Info,
  roles: new Set(ALL_ROLES),
  delegateRateLimitPerMinute: 120,
  stripe: {
    secretKey: Option.none(),
    webhookSecret: Option.none(),
    apiBase: { protocol: "https", host: "api.stripe.com", port: 443 },
    threeDSecureImport: false
  },
  ucpSigning: {
    keys: [{ kid: TEST_UCP_SIGNING_KEY.kid, jwk: Redacted.make(JSON.stringify(TEST_UCP_SIGNING_KEY)) }],
    signingKeyId: TEST_UCP_SIGNING_KEY.kid
  },
  ucp: {
    profileAllowedHosts: [],
    profileConnectTimeoutMs: 3_000,
    profileTimeoutMs: 5_000,
    profileMaxBytes: 256 * 1024,
    profileCacheEntries: 1_000
  },
  generated: [],
  ...overrides
})
