/**
 * The HTTP side: a node:http server on 127.0.0.1 that checks every request as Stripe does (a known
 * secret key as Bearer or Basic auth, the expected Stripe-Version, the endpoint's parameters),
 * applies idempotency to POSTs and the faults a test armed, runs the endpoint and writes JSON.
 * Checks that fail before the endpoint runs are never saved under an Idempotency-Key.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { newId } from "./clock.ts"
import { apiError, invalidRequest, StripeApiError } from "./errors.ts"
import type { FaultKind, Faults, FaultSpec } from "./faults.ts"
import { type FormHash, MalformedForm, parseForm } from "./form.ts"
import type { IdempotencyStore, SavedResponse } from "./idempotency.ts"
import { validate } from "./params.ts"
import { checkExpand } from "./render.ts"
import { findRoute } from "./routes.ts"
import type { FakeState } from "./state.ts"

export interface RecordedRequest {
  readonly requestId: string
  readonly method: string
  readonly path: string
  /** The decoded form body (POST) or query (GET), before type checks. */
  readonly params: FormHash
  readonly headers: Readonly<Record<string, string>>
  readonly idempotencyKey: string | null
  readonly fault: FaultKind | null
  /** The status answered (null when the fault left it unanswered). */
  status: number | null
  replayed: boolean
}

export interface ServerOptions {
  readonly secretKeys: ReadonlyArray<string>
  readonly apiVersion: string
  /** The 3-D Secure page a `redirect_to_url` points at: finishes authentication for the test. */
  readonly authenticate: (intentId: string, outcome: "succeeded" | "failed") => string | undefined
}

interface Answer {
  readonly status: number
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: JSON.stringify(value, null, 2),
  headers
})

const errorAnswer = (error: StripeApiError): Answer => json(error.status, { error: error.body }, { ...error.headers })

/** Equal parameters in any key order give the same fingerprint. */
const fingerprint = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(fingerprint).join(",")}]`
  const entries = Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${fingerprint((value as any)[key])}`)
  return `{${entries.join(",")}}`
}

const FAULT_ANSWERS: Partial<Record<FaultKind, () => Answer>> = {
  "500": () =>
    json(500, { error: { type: "api_error", message: "An unknown error occurred (injected by the test)." } }),
  // A lock timeout: Stripe marks it safe to retry, and the SDK retries on Stripe-Should-Retry: true.
  "429": () =>
    json(429, {
      error: {
        type: "invalid_request_error",
        code: "lock_timeout",
        message:
          "This object cannot be accessed right now because another API request or Stripe process is currently accessing it."
      }
    }, { "stripe-should-retry": "true" }),
  rate_limit: () =>
    json(429, {
      error: {
        type: "invalid_request_error",
        code: "rate_limit",
        message: "Too many requests hit the API too quickly."
      }
    })
}

const headerMap = (req: http.IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return headers
}

const readBody = (req: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class FakeServer {
  readonly requests: Array<RecordedRequest> = []
  private readonly server = http.createServer((req, res) => {
    this.handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { type: "api_error", message: `The test server failed: ${String(error)}` } }))
    })
  })
  private readonly held = new Set<http.ServerResponse>()

  constructor(
    private readonly state: FakeState,
    private readonly idempotency: IdempotencyStore,
    private readonly faults: Faults,
    private readonly options: ServerOptions
  ) {}

  /** On `port` of 127.0.0.1 (0: any free one); resolves with the port listened on. */
  async start(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject)
      this.server.listen(port, "127.0.0.1", resolve)
    })
    return (this.server.address() as AddressInfo).port
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private authError(secret: string | undefined): StripeApiError | undefined {
    if (secret !== undefined && this.options.secretKeys.includes(secret)) return undefined
    const message = secret === undefined || secret === ""
      ? "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer " +
        "auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details."
      : `Invalid API Key provided: ${secret.slice(0, 8)}${"*".repeat(Math.max(0, secret.length - 12))}${
        secret.slice(-4)
      }`
    return new StripeApiError(401, { type: "invalid_request_error", message }, {
      "www-authenticate": "Bearer realm=\"Stripe\""
    })
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req)
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const method = req.method ?? "GET"
    const headers = headerMap(req)
    const requestId = newId("req", 14)
    const idempotencyKey = method === "POST" ? headers["idempotency-key"] ?? null : null
    const fault = url.pathname.startsWith("/v1/") ? this.faults.take(method, url.pathname) : undefined
    let params: FormHash = {}
    try {
      params = parseForm(method === "POST" ? body : url.search.slice(1))
    } catch (error) {
      if (!(error instanceof MalformedForm)) throw error
    }
    const record: RecordedRequest = {
      requestId,
      method,
      path: url.pathname,
      params,
      headers,
      idempotencyKey,
      fault: fault?.with ?? null,
      status: null,
      replayed: false
    }
    this.requests.push(record)
    const answer = await this.answer(req, record, body, fault)
    if (answer === "hold") return this.hold(res)
    if (answer === "drop") return void req.socket.destroy()
    record.status = answer.status
    res.writeHead(answer.status, {
      "content-type": "application/json",
      "request-id": requestId,
      "stripe-version": this.options.apiVersion,
      ...(idempotencyKey === null ? {} : { "idempotency-key": idempotencyKey }),
      ...answer.headers
    })
    res.end(answer.body)
  }

  private hold(res: http.ServerResponse): void {
    this.held.add(res)
    res.on("close", () => this.held.delete(res))
  }

  private async answer(
    req: http.IncomingMessage,
    record: RecordedRequest,
    body: string,
    fault: FaultSpec | undefined
  ): Promise<Answer | "hold" | "drop"> {
    const early = fault === undefined ? undefined : FAULT_ANSWERS[fault.with]
    if (early !== undefined) return early()
    if (fault?.with === "drop-before-processing") return "drop"
    if (record.method === "GET" && record.path.startsWith("/fake/3ds/")) return this.threeDSecure(req)

    const authorization = record.headers.authorization ?? ""
    const secret = authorization.startsWith("Bearer ")
      ? authorization.slice(7)
      : authorization.startsWith("Basic ")
      ? Buffer.from(authorization.slice(6), "base64").toString("utf8").split(":")[0]
      : undefined
    const denied = this.authError(secret)
    if (denied !== undefined) return errorAnswer(denied)
    const version = record.headers["stripe-version"]
    if (version !== this.options.apiVersion) {
      // Stripe would use the account's default version when the header is missing: the fake insists on it.
      return errorAnswer(invalidRequest(
        version === undefined
          ? `This test server requires the Stripe-Version header (${this.options.apiVersion}).`
          : `Invalid Stripe API version: ${version} (this test server serves ${this.options.apiVersion}).`
      ))
    }
    const found = findRoute(record.method, record.path)
    if (found === undefined) {
      return errorAnswer(invalidRequest(
        `Unrecognized request URL (${record.method}: ${record.path}). Please see https://stripe.com/docs.`,
        {},
        404
      ))
    }
    let call
    try {
      if (
        record.method === "POST" && body !== "" && !/x-www-form-urlencoded/.test(record.headers["content-type"] ?? "")
      ) {
        throw invalidRequest("Request bodies must be application/x-www-form-urlencoded.")
      }
      const raw = record.method === "POST" ? parseForm(body) : record.params
      const params = validate(found.route.fields, raw)
      const expand = (params.expand as Array<string> | undefined) ?? []
      checkExpand(expand, found.route.expandable)
      call = {
        id: found.id,
        params,
        expand,
        request: { requestId: record.requestId, idempotencyKey: record.idempotencyKey }
      }
    } catch (error) {
      if (error instanceof MalformedForm) return errorAnswer(invalidRequest(`Invalid request body: ${error.message}`))
      if (error instanceof StripeApiError) return errorAnswer(error)
      throw error
    }

    const key = record.idempotencyKey
    const account = secret!
    if (key !== null) {
      try {
        const claim = this.idempotency.claim(
          account,
          key,
          `${record.method} ${found.route.path}`,
          fingerprint(record.params)
        )
        if (claim.kind === "replay") return this.replay(record, claim.response, fault)
      } catch (error) {
        if (error instanceof StripeApiError) return errorAnswer(error)
        throw error
      }
    }
    if (fault?.with === "delay") await sleep(fault.ms ?? 200)
    let answer: Answer
    try {
      answer = json(200, found.route.run(this.state, call))
    } catch (error) {
      answer = errorAnswer(
        error instanceof StripeApiError ? error : apiError(`The test server failed: ${String(error)}`)
      )
    }
    if (key !== null) this.idempotency.save(account, key, { ...answer, requestId: record.requestId })
    if (fault?.with === "timeout") return "hold"
    if (fault?.with === "drop-after-processing") return "drop"
    return answer
  }

  private replay(
    record: RecordedRequest,
    saved: SavedResponse,
    fault: FaultSpec | undefined
  ): Answer | "hold" | "drop" {
    record.replayed = true
    if (fault?.with === "timeout") return "hold"
    if (fault?.with === "drop-after-processing") return "drop"
    return {
      status: saved.status,
      body: saved.body,
      headers: { ...saved.headers, "idempotent-replayed": "true", "original-request": saved.requestId }
    }
  }

  private threeDSecure(req: http.IncomingMessage): Answer {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const outcome = url.searchParams.get("outcome") === "failed" ? "failed" : "succeeded"
    let returnUrl: string | undefined
    try {
      returnUrl = this.options.authenticate(url.pathname.slice("/fake/3ds/".length), outcome)
    } catch (error) {
      if (error instanceof StripeApiError) return errorAnswer(error)
      return errorAnswer(invalidRequest(String(error)))
    }
    return returnUrl === undefined
      ? json(200, { authenticated: outcome })
      : { status: 302, body: "", headers: { location: returnUrl } }
  }
}
