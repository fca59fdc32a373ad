/**
 * The HTTP stack in layers, for `npm run bench -- --targets stack --scenarios healthz`: one
 * server per layer answering `GET /healthz` with `{"ok":true}` and no other work, so that the rows
 * of the bare Node server, these layers, the floor and our server say what each layer adds to
 * every exchange in CPU per request. `STACK_LAYER` picks the layer:
 *
 * - `fiber`: Node's `http` server running one Effect fiber per request (`Runtime.runFork`) and
 *   writing the response when the fiber exits: the least an Effect server pays per request;
 * - `platform`: `HttpServer.serve` of `@effect/platform-node` with one fixed response and no
 *   router (the platform's request scope, error handling and response writing);
 * - `httpapi`: one `HttpApi` endpoint served by `HttpApiBuilder.serve` (router, endpoint
 *   decoding and the success schema's encoding besides).
 *
 * The platform's per-request span is off in both platform layers, as in our server (the floor
 * keeps it on). Env: STACK_LAYER (required), PORT, HOST (127.0.0.1). Run compiled by
 * `scripts/bench.ts`, like the floor.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpMiddleware,
  HttpServer,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Runtime, Schema } from "effect"
import { createServer } from "node:http"

const port = Number(process.env["PORT"] ?? "8090")
const host = process.env["HOST"] ?? "127.0.0.1"
const layer = process.env["STACK_LAYER"]
const body = JSON.stringify({ ok: true })

const serveFiberPerRequest = () => {
  const runFork = Runtime.runFork(Runtime.defaultRuntime)
  createServer((request, response) => {
    request.resume()
    // The fiber cannot fail: the response is written once it has run.
    runFork(Effect.succeed(body)).addObserver(() => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      response.end(body)
    })
  }).listen(port, host)
}

const NodeServer = NodeHttpServer.layer(createServer, { port, host })

const servePlatform = () =>
  HttpServer.serve(Effect.succeed(HttpServerResponse.text(body, { contentType: "application/json" }))).pipe(
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(NodeServer),
    Layer.launch,
    NodeRuntime.runMain
  )

class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", "/healthz").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
{}

class HealthApi extends HttpApi.make("health").add(HealthGroup) {}

const HealthHandlers = HttpApiBuilder.group(
  HealthApi,
  "health",
  (handlers) => handlers.handle("health", () => Effect.succeed({ ok: true }))
)

const serveHttpApi = () =>
  HttpApiBuilder.serve().pipe(
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(HttpApiBuilder.api(HealthApi).pipe(Layer.provide(HealthHandlers))),
    Layer.provide(NodeServer),
    Layer.launch,
    NodeRuntime.runMain
  )

switch (layer) {
  case "fiber":
    serveFiberPerRequest()
    break
  case "platform":
    servePlatform()
    break
  case "httpapi":
    serveHttpApi()
    break
  default:
    console.error(`STACK_LAYER must be fiber, platform or httpapi (got ${String(layer)})`)
    process.exit(1)
}
