/**
 * The module over real HTTP: a plain node:http server on loopback verifies UCP-signed requests sent with
 * fetch and signs its responses, which the client verifies. Only the message shape is adapted.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { SignatureKey } from "../../../src/shared/http-signatures/algorithms.ts"
import { generateEcKeyPair, importJwk } from "../../../src/shared/http-signatures/keys.ts"
import type { HttpMessage } from "../../../src/shared/http-signatures/message.ts"
import { signUcpMessage, verifyUcpMessage } from "../../../src/shared/http-signatures/ucp.ts"

const keyPair = (kid: string) => {
  const jwks = generateEcKeyPair(kid)
  return {
    signer: Either.getOrThrow(importJwk(jwks.privateJwk)),
    verifier: Either.getOrThrow(importJwk(jwks.publicJwk))
  }
}
const platform = keyPair("platform-1")
const merchant = keyPair("merchant-1")
const platformKeys: { readonly [kid: string]: SignatureKey } = { "platform-1": platform.verifier }
const merchantKeys: { readonly [kid: string]: SignatureKey } = { "merchant-1": merchant.verifier }

const readBody = (req: http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const server = http.createServer((req, res) => {
  void readBody(req).then((raw) => {
    const request: HttpMessage = {
      method: req.method ?? "",
      url: `http://${req.headers.host}${req.url}`,
      headers: req.headersDistinct,
      body: new Uint8Array(raw)
    }
    const verified = verifyUcpMessage(request, { resolveKey: (kid) => platformKeys[kid] })
    if (Either.isLeft(verified)) {
      res.writeHead(verified.left.status, { "content-type": "application/json" })
      res.end(JSON.stringify({ code: verified.left.code, content: verified.left.reason }))
      return
    }
    const body = JSON.stringify({ checkout: { id: "chk_123", signed_by: verified.right.keyid } })
    const response: HttpMessage = { status: 201, headers: { "content-type": "application/json" }, body }
    const headers = Either.getOrThrow(signUcpMessage(response, { key: merchant.signer, created: 1_700_000_000 }))
    res.writeHead(201, { "content-type": "application/json", ...headers })
    res.end(body)
  })
})

let base = ""
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const body = "{\"checkout\":{\"line_items\":[{\"id\":\"prod_123\",\"quantity\":2}]}}"
const headers = {
  "content-type": "application/json",
  "ucp-agent": "profile=\"https://platform.example/.well-known/ucp\"",
  "idempotency-key": "550e8400-e29b-41d4-a716-446655440000"
}

const send = async (sentBody: string, signedBody = sentBody, extra: Record<string, string> = {}) => {
  const url = `${base}/checkout-sessions?currency=usd`
  const message: HttpMessage = { method: "POST", url, headers, body: signedBody }
  const signature = Either.getOrThrow(signUcpMessage(message, { key: platform.signer }))
  const response = await fetch(url, { method: "POST", headers: { ...headers, ...signature, ...extra }, body: sentBody })
  const received: { [name: string]: string } = {}
  response.headers.forEach((value, name) => {
    received[name] = value
  })
  return {
    status: response.status,
    headers: received,
    body: new Uint8Array(await response.arrayBuffer())
  } satisfies HttpMessage
}

describe("over node:http and fetch", () => {
  it("the server verifies the signed request and the client verifies the signed response", async () => {
    const response = await send(body)
    expect(response.status).toBe(201)
    const verified = Either.getOrThrow(verifyUcpMessage(response, { resolveKey: (kid) => merchantKeys[kid] }))
    expect(verified.keyid).toBe("merchant-1")
    expect(JSON.parse(Buffer.from(response.body as Uint8Array).toString())).toEqual({
      checkout: { id: "chk_123", signed_by: "platform-1" }
    })
  })

  it("the server answers 400 digest_mismatch for a body changed in transit", async () => {
    const response = await send(body.replace("2", "3"), body)
    expect(response.status).toBe(400)
    expect(JSON.parse(Buffer.from(response.body as Uint8Array).toString()).code).toBe("digest_mismatch")
  })

  it("the server answers 401 signature_invalid for a covered header changed in transit", async () => {
    const response = await send(body, body, { "idempotency-key": "another-key-0000000000" })
    expect(response.status).toBe(401)
    expect(JSON.parse(Buffer.from(response.body as Uint8Array).toString()).code).toBe("signature_invalid")
  })

  it("the server answers 401 signature_missing for an unsigned request", async () => {
    const response = await fetch(`${base}/checkout-sessions`, { method: "POST", headers, body })
    expect(response.status).toBe(401)
    expect((await response.json() as { code: string }).code).toBe("signature_missing")
  })
})
