/** Entry point: loads the configuration, then serves (or supervises `WORKERS`) until SIGINT/SIGTERM. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ConfigError, Effect, Layer, Logger } from "effect"
import { ServerLive } from "./app/server.ts"
import { isWorkerProcess, superviseWorkers } from "./app/worker-processes.ts"
import { AppConfig, describeConfigError, loadConfig } from "./platform/config.ts"
import { batchedLogFmt } from "./platform/log-output.ts"

/** The generated secrets printed in full: the keys a developer calls the service with, one of each kind. */
const PRINTED_KEYS: Readonly<Record<string, { readonly kind: string; readonly variable: string }>> = {
  api_key: { kind: "agent", variable: "API_KEYS" },
  merchant_api_key: { kind: "merchant", variable: "MERCHANT_API_KEYS" }
}

const program = Effect.gen(function*() {
  const config = yield* loadConfig.pipe(
    Effect.catchAll((error) =>
      Effect.zipRight(
        Effect.sync(() => console.error(`Invalid configuration:\n${describeConfigError(error)}`)),
        Effect.sync(() => process.exit(1))
      )
    )
  )
  // Secrets are generated (and printed) once, by the first process; workers read them from DATA_DIR.
  for (const secret of config.generated) {
    const key = PRINTED_KEYS[secret.name]
    console.log(
      key === undefined
        ? `Generated ${secret.name} (kept in ${secret.file}): ***`
        : `Generated ${secret.name}, the ${key.kind} API key (kept in ${secret.file}): ${secret.value}`
    )
  }
  if (!config.production && !isWorkerProcess) {
    for (const [name, key] of Object.entries(PRINTED_KEYS)) {
      if (config.generated.every((secret) => secret.name !== name)) {
        console.log(`The ${key.kind} API key: see ${config.dataDir}/secrets.json (${name}) or ${key.variable}`)
      }
    }
  }
  const run = config.workers > 1 && !isWorkerProcess ? superviseWorkers(config.workers) : Layer.launch(ServerLive)
  return yield* run.pipe(
    Effect.provideService(AppConfig, config),
    Effect.provide(batchedLogFmt()),
    Logger.withMinimumLogLevel(config.logLevel),
    // Spans (one per SQL statement, per request…) go nowhere without a trace exporter: not made.
    Effect.withTracerEnabled(false)
  )
}).pipe(
  Effect.catchAllCause((cause) =>
    Effect.sync(() => {
      const failure = cause.toJSON()
      console.error(
        `Start-up failed: ${ConfigError.isConfigError(failure) ? describeConfigError(failure) : prettyMessage(cause)}`
      )
      process.exit(1)
    })
  )
)

function prettyMessage(cause: unknown): string {
  const text = String((cause as { toString(): string }).toString())
  return text.split("\n")[0] ?? text
}

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
