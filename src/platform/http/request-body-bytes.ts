/**
 * A request's body bytes, read once per request, whoever asks first: the idempotency middleware
 * and the signature check read the body before the route does, and all of them get the same
 * bytes (`request-body.ts` makes text and JSON of them).
 *
 * On Node the body is read straight from the `IncomingMessage`: its chunks as they come, no
 * decoder, one callback into the fiber when it ends. The platform's `request.text` costs a
 * synchronous fiber to build its cache, a scope and an encoding stream per request, and on a
 * create it was the most expensive step before the handler's own work. Anything else (the web
 * handler of the tests) reads through the platform's cached `arrayBuffer`.
 *
 * Every reader of a route's body must come through here: a stream read by one reader cannot be
 * read by another.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Exit, Option } from "effect"
import { IncomingMessage } from "node:http"

/** The largest body any route reads. */
export const MAX_BODY_BYTES = 1024 * 1024

/** Why a body could not be read: larger than `MAX_BODY_BYTES`, or the stream failed or ended early. */
export type BodyReadFailure = "too_large" | "unreadable"

type BodyRead = Effect.Effect<Uint8Array, BodyReadFailure>

/** Each request's read, by the request's source (every `HttpServerRequest` of it shares it). */
const reads = new WeakMap<object, BodyRead>()

/**
 * Reads the message's body from now on. The read settles once; whoever awaits it before then is
 * resumed with the outcome.
 */
const readIncoming = (incoming: IncomingMessage): BodyRead => {
  let outcome: Exit.Exit<Uint8Array, BodyReadFailure> | undefined
  const waiting: Array<(exit: Exit.Exit<Uint8Array, BodyReadFailure>) => void> = []
  const settle = (exit: Exit.Exit<Uint8Array, BodyReadFailure>) => {
    outcome = exit
    for (const resume of waiting.splice(0)) resume(exit)
  }
  if (incoming.readableEnded || incoming.destroyed) {
    // Read by something that does not come through here, or gone: nothing will ever arrive.
    settle(Exit.fail("unreadable"))
  } else {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onFailure)
      incoming.off("close", onFailure)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= MAX_BODY_BYTES) return void chunks.push(chunk)
      // The route answers 413 at once; the rest of the body still flows and is dropped, so the
      // client reads that answer and the connection stays usable.
      stop()
      incoming.resume()
      settle(Exit.fail("too_large"))
    }
    const onEnd = () => {
      stop()
      settle(Exit.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)))
    }
    // An error, or the message closed before its end (the client went away).
    const onFailure = () => {
      stop()
      settle(Exit.fail("unreadable"))
    }
    incoming.on("data", onData)
    incoming.on("end", onEnd)
    incoming.on("error", onFailure)
    incoming.on("close", onFailure)
  }
  return Effect.suspend(() =>
    outcome ?? Effect.async<Uint8Array, BodyReadFailure>((resume) => {
      if (outcome !== undefined) return resume(outcome)
      waiting.push(resume)
    })
  )
}

/** The platform's read, for requests that are not Node messages. */
const readPlatform = (request: HttpServerRequest.HttpServerRequest): BodyRead =>
  request.arrayBuffer.pipe(
    HttpServerRequest.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
    Effect.mapError((error): BodyReadFailure =>
      error.cause instanceof Error && error.cause.message === "maxBytes exceeded" ? "too_large" : "unreadable"
    ),
    Effect.flatMap((buffer) =>
      buffer.byteLength > MAX_BODY_BYTES ? Effect.fail("too_large" as const) : Effect.succeed(new Uint8Array(buffer))
    )
  )

/** `request`'s body bytes, at most `MAX_BODY_BYTES`, read once per request. */
export const requestBody = (request: HttpServerRequest.HttpServerRequest): BodyRead => {
  const source = request.source as object
  let read = reads.get(source)
  if (read === undefined) {
    read = source instanceof IncomingMessage ? readIncoming(source) : readPlatform(request)
    reads.set(source, read)
  }
  return read
}

/** Body bytes as UTF-8 text (malformed sequences replaced, as the platform's `request.text` does). */
export const bodyText = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")

/** The current request's body as text (`requestBody`, `bodyText`). */
export const requestBodyText: Effect.Effect<string, BodyReadFailure, HttpServerRequest.HttpServerRequest> = Effect
  .flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.map(requestBody(request), bodyText))
