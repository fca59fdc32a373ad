/**
 * The simulated access control server's pages, posted to as 3-D Secure 2 browser flows do (`docs/three-d-secure.md`).
 * They work without JavaScript, escape every value, and their Content-Security-Policy allows no script at all.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Schema } from "effect"
import { groupHandlers } from "../../platform/http/group-context.ts"
import { escapeHtml, isHttpUrl } from "../../shared/html.ts"
import { IssuerAuthentication } from "../authentication-service.ts"
import type { AuthenticationSession } from "../model/authentication-session.ts"
import { THREE_DS_VERSION } from "../model/authentication-session.ts"
import { AcsApi } from "./api.ts"

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; form-action http: https:; base-uri 'none'"

const page = (title: string, body: string, status = 200) =>
  HttpServerResponse.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
      `content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>` +
      `<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}` +
      `input,button{font-size:1rem;padding:.4rem;margin:.2rem 0}</style></head><body>` +
      `<h1>${escapeHtml(title)}</h1>${body}</body></html>`
  ).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeader("content-security-policy", CONTENT_SECURITY_POLICY),
    HttpServerResponse.setHeader("cache-control", "no-store")
  )

const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

const Creq = Schema.parseJson(Schema.Struct({
  threeDSServerTransID: Schema.String,
  acsTransID: Schema.String,
  messageVersion: optionalString(),
  messageType: Schema.Literal("CReq")
}))
const MethodData = Schema.parseJson(Schema.Struct({
  threeDSServerTransID: Schema.String,
  threeDSMethodNotificationURL: optionalString()
}))

function optionalString() {
  return Schema.optional(Schema.String.pipe(Schema.maxLength(2048)))
}

/** base64url (or base64) text of a JSON message, decoded with `schema`; a refusal is undefined. */
const decodeMessage = <A>(schema: Schema.Schema<A, string>, text: string): A | undefined => {
  const decoded = Schema.decodeEither(schema)(Buffer.from(text, "base64url").toString("utf8"))
  return Either.getOrUndefined(decoded)
}

/** A form that posts `field=value` to `url` (the buyer presses the button; no script). */
const postForm = (url: string, field: string, value: string, label: string) =>
  `<form method="post" action="${escapeHtml(url)}"><input type="hidden" name="${escapeHtml(field)}" ` +
  `value="${escapeHtml(value)}"><button type="submit">${escapeHtml(label)}</button></form>`

const resultPage = (session: AuthenticationSession) => {
  const transStatus = session.result?.transStatus ?? "U"
  const cres = base64urlJson({
    threeDSServerTransID: session.threeDsServerTransId,
    acsTransID: session.acsTransId,
    messageType: "CRes",
    messageVersion: THREE_DS_VERSION,
    transStatus
  })
  const words = transStatus === "Y" ? "Authentication succeeded." : "Authentication did not succeed."
  return page(
    "Test issuer: result",
    `<p>${escapeHtml(words)} (${escapeHtml(session.status)})</p>` +
      (isHttpUrl(session.challengeNotificationUrl)
        ? postForm(session.challengeNotificationUrl, "cres", cres, "Return to the merchant")
        : "")
  )
}

export const AcsHandlers = groupHandlers(
  AcsApi,
  "acs",
  Effect.fnUntraced(function*(handlers) {
    const service = yield* IssuerAuthentication
    const notFound = page("Test issuer", "<p>No such authentication transaction.</p>", 404)
    /** Shows the challenge page's form, or answers it. */
    const challenge = Effect.fnUntraced(
      function*(
        id: string,
        payload: { readonly creq: string; readonly code?: string | undefined; readonly abandon?: string | undefined }
      ) {
        const creq = decodeMessage(Creq, payload.creq)
        if (creq === undefined) return page("Test issuer", "<p>The challenge request (CReq) is not valid.</p>", 400)
        if (payload.code === undefined && payload.abandon === undefined) {
          const session = yield* service.forAcs(id, creq.acsTransID)
          if (session.status !== "action_required" || session.action !== "challenge") return resultPage(session)
          return page(
            "Test issuer: confirm your purchase",
            `<p>Card ending ${escapeHtml(session.card.last4)}: ${session.amount} (minor units) ` +
              `${escapeHtml(session.currency)}. Enter the code sent to you (test code: 123456).</p>` +
              `<form method="post"><input type="hidden" name="creq" value="${escapeHtml(payload.creq)}">` +
              `<label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" required></label> ` +
              `<button type="submit">Confirm</button></form>` +
              `<form method="post"><input type="hidden" name="creq" value="${escapeHtml(payload.creq)}">` +
              `<input type="hidden" name="abandon" value="1"><button type="submit">Cancel</button></form>`
          )
        }
        const session = yield* service.answerChallenge(
          id,
          creq.acsTransID,
          payload.abandon ? undefined : payload.code
        )
        return resultPage(session)
      },
      Effect.catchTags({
        AuthenticationSessionNotFound: () => Effect.succeed(notFound),
        AuthenticationStepRefused: (error) =>
          Effect.succeed(page("Test issuer", `<p>${escapeHtml(error.message)}</p>`, 409)),
        StorageError: () => Effect.succeed(page("Test issuer", "<p>Temporarily unavailable; try again.</p>", 503))
      })
    )
    return handlers
      .handle("method", ({ path, payload }) =>
        Effect.sync(() => {
          const data = decodeMessage(MethodData, payload.threeDSMethodData)
          if (data === undefined) return page("Test issuer", "<p>The 3DS Method data is not valid.</p>", 400)
          const notify = data.threeDSMethodNotificationURL
          return page(
            "Test issuer: device check",
            `<p>Device data collected for ${escapeHtml(path.authentication_session_id)}.</p>` +
              (isHttpUrl(notify)
                ? postForm(
                  notify,
                  "threeDSMethodData",
                  base64urlJson({ threeDSServerTransID: data.threeDSServerTransID }),
                  "Continue"
                )
                : "")
          )
        }))
      .handle("challenge", ({ path, payload }) => challenge(path.authentication_session_id, payload))
  })
)
