/**
 * The database layer: PostgreSQL at `DATABASE_URL`, else PGlite under `DATA_DIR/pglite` in a process
 * of its own (`./embedded-database.ts`); migrated, with the SQL functions applied. PGlite is a single
 * backend session, so its socket server and pool allow exactly one connection.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Cause, Config, type ConfigError, Data, Effect, Layer, Option, Redacted } from "effect"
import { mkdirSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import {
  EmbeddedStartError,
  lockDataDir,
  PGLITE_SETTINGS,
  prepareDataDir,
  startEmbeddedDatabaseProcess
} from "./embedded-database.ts"
import { migrationsLoader } from "./migrations/index.ts"
import { pgClientLayer } from "./pg-client.ts"
import { applySqlFunctions } from "./sql-functions.ts"
import { isConnectionProblem } from "./storage-error.ts"

export const DEFAULT_POOL_SIZE = 10

export const CONNECT_TIMEOUT_MILLIS = 5_000

export class DatabaseError extends Data.TaggedError("DatabaseError")<{ readonly message: string }> {
  constructor(args: { readonly message: string }) {
    super(args)
    // Printed at start-up, where the message says it all and a stack is noise.
    this.stack = `DatabaseError: ${args.message}`
  }
}

export type DatabaseOptions =
  | {
    readonly kind: "postgres"
    readonly url: Redacted.Redacted<string>
    readonly poolSize?: number
    /** Statements run as named prepared statements (`./pg-client.ts`); default true. */
    readonly preparedStatements?: boolean
    /** How the URL was configured, for error messages; default "DATABASE_URL". */
    readonly source?: string
  }
  | {
    readonly kind: "embedded"
    /** The PGlite data directory (its parents are created); absent → in memory, lost at the end. */
    readonly dataDir?: string
    /** A `PGlite#dumpDataDir` archive to seed a new directory from, skipping initdb (tests). */
    readonly loadDataDir?: Blob
    /** PGlite in this process rather than in one of its own (tests); default false. */
    readonly inProcess?: boolean
  }

export const describeUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(unparsable URL)"
  }
}

const describeError = (error: unknown): string => {
  const parts: Array<string> = []
  const seen = new Set<unknown>()
  let current: unknown = error
  while (current !== undefined && current !== null && !seen.has(current) && parts.length < 5) {
    seen.add(current)
    if (typeof current !== "object") {
      parts.push(String(current))
      break
    }
    const e = current as { message?: unknown; code?: unknown; errors?: unknown; cause?: unknown }
    const message = typeof e.message === "string" ? e.message.trim() : ""
    const code = typeof e.code === "string" ? e.code : ""
    if (message !== "") parts.push(code !== "" && !message.includes(code) ? `${message} (${code})` : message)
    else if (code !== "") parts.push(code)
    if (Array.isArray(e.errors) && e.errors.length > 0 && e.cause === undefined) {
      current = e.errors[0]
    } else {
      current = e.cause
    }
  }
  const unique = parts.filter((part, index) => parts.indexOf(part) === index)
  return unique.length > 0 ? unique.join(": ") : "unknown error"
}

const toDatabaseError = (options: DatabaseOptions, cause: Cause.Cause<unknown>): DatabaseError => {
  const error = Cause.squash(cause)
  const detail = describeError(error)
  if (options.kind === "postgres") {
    const where = `${options.source ?? "DATABASE_URL"} (${describeUrl(Redacted.value(options.url))})`
    return new DatabaseError({
      message: isConnectionProblem(error)
        ? `Cannot connect to the PostgreSQL database given by ${where}: ${detail}`
        : `Cannot prepare the PostgreSQL database given by ${where}: ${detail}`
    })
  }
  const where = options.dataDir === undefined ? "in memory" : `in ${resolve(options.dataDir)}`
  return new DatabaseError({
    message: `Cannot open the embedded database (PGlite) ${where}: ${detail}. ` +
      `Set DATABASE_URL to use a PostgreSQL server instead.`
  })
}

const embeddedPool = (address: string) =>
  pgClientLayer({
    url: `postgres://postgres@${address}/postgres`,
    maxConnections: 1,
    preparedStatements: true,
    idleTimeoutMillis: 0,
    connectTimeoutMillis: CONNECT_TIMEOUT_MILLIS
  })

const inProcessEmbeddedDatabase = Effect.fnUntraced(
  function*(dataDir: string | undefined, loadDataDir: Blob | undefined) {
    const loadFrom = yield* prepareDataDir(dataDir, loadDataDir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        // Imported here only: a server on PostgreSQL or on the database process never loads PGlite.
        try: async () => {
          const { PGlite } = await import("@electric-sql/pglite")
          const options = {
            startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS],
            ...(loadFrom !== undefined ? { loadDataDir: loadFrom } : {})
          }
          return dataDir === undefined ? PGlite.create(options) : PGlite.create(dataDir, options)
        },
        catch: (cause) => new EmbeddedStartError({ message: "cannot open PGlite", cause })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const server = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket")
          const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
          await server.start()
          return server
        },
        catch: (cause) => new EmbeddedStartError({ message: "cannot start the PGlite socket server", cause })
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    return server.getServerConn()
  }
)

const embeddedClient = (
  options: Extract<DatabaseOptions, { kind: "embedded" }>
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown> =>
  // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
  Layer.unwrapScoped(Effect.gen(function*() {
    const { dataDir, loadDataDir } = options
    if (dataDir !== undefined) {
      yield* Effect.try({
        try: () => mkdirSync(dirname(resolve(dataDir)), { recursive: true }),
        catch: (cause) => new EmbeddedStartError({ message: "cannot create the data directory", cause })
      })
      yield* lockDataDir(dataDir)
    }
    const address = options.inProcess === true
      ? yield* inProcessEmbeddedDatabase(dataDir, loadDataDir)
      : `127.0.0.1:${(yield* startEmbeddedDatabaseProcess({ dataDir, loadDataDir })).port}`
    return embeddedPool(address)
  }))

export const MIGRATION_LOCK_KEY = 0x0ac9_0001

const migrate = Effect.zipRight(
  PgMigrator.run({ loader: migrationsLoader }),
  applySqlFunctions()
)

// On PostgreSQL the whole run holds a transaction-level advisory lock: processes starting together on
// a fresh database would otherwise race on the migrator's own `CREATE TABLE` ("already exists").
const migrationsLayer = (kind: DatabaseOptions["kind"]) =>
  kind === "embedded"
    ? Layer.effectDiscard(migrate)
    : Layer.effectDiscard(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
          // The migrator's probe of a missing table fails, aborting this transaction: create it as it would.
          yield* sql`
            CREATE TABLE IF NOT EXISTS effect_sql_migrations (
              migration_id integer primary key,
              created_at timestamp with time zone not null default now(),
              name text not null
            )`
          yield* migrate
        })))
    )

export const makeDatabaseLayer = (
  options: DatabaseOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseError> => {
  const client: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown> = options.kind === "postgres"
    ? pgClientLayer({
      url: Redacted.value(options.url),
      maxConnections: options.poolSize ?? DEFAULT_POOL_SIZE,
      preparedStatements: options.preparedStatements ?? true,
      // Without it node-postgres waits forever for an unresponsive host, and so would /readyz.
      connectTimeoutMillis: CONNECT_TIMEOUT_MILLIS
    })
    : embeddedClient(options)
  return migrationsLayer(options.kind).pipe(
    Layer.provide(NodeContext.layer),
    Layer.provideMerge(client),
    Layer.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Layer.failCause(cause as Cause.Cause<never>)
        : Layer.fail(toDatabaseError(options, cause))
    )
  )
}

/** The options `DatabaseLive` reads from the environment (CONTRACT §2). */
export const databaseOptionsConfig: Config.Config<DatabaseOptions> = Config.all({
  url: Config.option(Config.redacted("DATABASE_URL")),
  poolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.validate({ message: "Expected a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(DEFAULT_POOL_SIZE)
  ),
  preparedStatements: Config.boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data"))
}).pipe(
  Config.map(({ dataDir, poolSize, preparedStatements, url }): DatabaseOptions =>
    Option.isSome(url) && Redacted.value(url.value).trim() !== ""
      ? { kind: "postgres", url: url.value, poolSize, preparedStatements }
      : { kind: "embedded", dataDir: join(dataDir, "pglite") }
  )
)

export const DatabaseLive: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient,
  DatabaseError | ConfigError.ConfigError
> = Layer.unwrapEffect(Effect.map(databaseOptionsConfig, makeDatabaseLayer))
