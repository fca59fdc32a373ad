/**
 * A request's body bytes, read once per request whoever asks first: a stream cannot be read twice, so
 * every reader comes through here. On Node, straight from the `IncomingMessage` (`request.text` costs a
 * fiber, a scope and a decoder per request); elsewhere through the platform's cached `arrayBuffer`.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Exit, Option } from "effect"
import { IncomingMessage } from "node:http"

export const MAX_BODY_BYTES = 1024 * 1024

export type BodyReadFailure = "too_large" | "unreadable"

type BodyRead = Effect.Effect<Uint8Array, BodyReadFailure>

/** By the request's source, which every `HttpServerRequest` of it shares. */
const reads = new WeakMap<object, BodyRead>()

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
      // 413 at once; the rest is drained and dropped, so the client reads it and the connection stays usable.
      stop()
      incoming.resume()
      settle(Exit.fail("too_large"))
    }
    const onEnd = () => {
      stop()
      settle(Exit.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)))
    }
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

export const requestBodyText: Effect.Effect<string, BodyReadFailure, HttpServerRequest.HttpServerRequest> = Effect
  .flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.map(requestBody(request), bodyText))
