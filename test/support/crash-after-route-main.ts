/**
 * `src/main.ts` with one fault, for the multi-process crash tests: a request carrying the header
 * `x-test-crash: after-route` kills this process with SIGKILL right after its route ran — its
 * effect, and its idempotent answer, committed — before the key is settled or the response sent
 * (`FaultInjection.afterRoute`). Every other request is served as `src/main.ts` serves it.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import { ServerLive } from "../../src/app/server.ts"
import { AppConfig, loadConfig } from "../../src/platform/config.ts"
import { FaultInjection } from "../../src/platform/fault-injection.ts"

const CRASH_HEADER = "x-test-crash"

const killedAfterRoute = Layer.succeed(FaultInjection, {
  afterRoute: (request) =>
    request.headers[CRASH_HEADER] === "after-route"
      ? Effect.sync(() => process.kill(process.pid, "SIGKILL"))
      : Effect.void,
  at: () => Effect.void
})

const program = Effect.flatMap(loadConfig, (config) =>
  Layer.launch(ServerLive).pipe(
    Effect.provide(killedAfterRoute),
    Effect.provideService(AppConfig, config),
    Logger.withMinimumLogLevel(config.logLevel)
  ))

NodeRuntime.runMain(program)
