/**
 * `groupHandlers`: the handlers are built with the application's services, the group's requests
 * run with the router's services and the group's middleware only.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { groupHandlers } from "../../../src/platform/http/group-context.ts"

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}
class Caller extends Context.Tag("test/Caller")<Caller, string>() {}
class Identify extends HttpApiMiddleware.Tag<Identify>()("test/Identify", { provides: Caller }) {}

const Answer = Schema.Struct({ greeting: Schema.String, caller: Schema.String, greetingInRequest: Schema.Boolean })
const Api = HttpApi.make("test").add(
  HttpApiGroup.make("hello").add(HttpApiEndpoint.get("hello", "/hello").addSuccess(Answer)).middleware(Identify)
)

const IdentifyLive = Layer.succeed(Identify, Identify.of(Effect.succeed("agent")))

const hello = Effect.gen(function*() {
  const greeting = yield* Greeting
  return Effect.gen(function*() {
    const caller = yield* Caller
    const inRequest = yield* Effect.serviceOption(Greeting)
    return { greeting, caller, greetingInRequest: Option.isSome(inRequest) }
  })
})

const OurHandlers = groupHandlers(
  Api,
  "hello",
  (handlers) => Effect.map(hello, (handler) => handlers.handle("hello", () => handler))
)

const PlatformHandlers = HttpApiBuilder.group(
  Api,
  "hello",
  (handlers) => Effect.map(hello, (handler) => handlers.handle("hello", () => handler))
)

const answer = (handlers: typeof OurHandlers | typeof PlatformHandlers) =>
  Effect.gen(function*() {
    const { dispose, handler } = HttpApiBuilder.toWebHandler(
      HttpApiBuilder.api(Api).pipe(
        Layer.provide(handlers),
        Layer.provide(IdentifyLive),
        Layer.provide(Layer.succeed(Greeting, "hello")),
        Layer.merge(HttpServer.layerContext)
      )
    )
    const response = yield* Effect.promise(() => handler(new Request("http://localhost/hello")))
    const body = yield* Effect.promise(() => response.json())
    yield* Effect.promise(() => dispose())
    return { status: response.status, body }
  })

describe("groupHandlers", () => {
  it.effect("handlers take services when built; a request sees the group's middleware but not the application", () =>
    Effect.gen(function*() {
      const ours = yield* answer(OurHandlers)
      expect(ours).toEqual({ status: 200, body: { greeting: "hello", caller: "agent", greetingInRequest: false } })
      // The platform's group carries the whole build context into every request.
      const platform = yield* answer(PlatformHandlers)
      expect(platform).toEqual({ status: 200, body: { greeting: "hello", caller: "agent", greetingInRequest: true } })
    }))
})
