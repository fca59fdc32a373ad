/** Sessions in the line-items format, and the domain's JSONPaths in this format's names. */
import { type FulfillmentOption as PlainOption } from "../../../catalog/model/fulfillment.ts"
import { type LineItem as PlainLine } from "../../../catalog/model/line-items.ts"
import { isAtLeast } from "../../../shared/api-versions.ts"
import { defined } from "../../../shared/defined-fields.ts"
import type { FulfillmentContact, JsonObject } from "../../session/details.ts"
import type { Message as PlainMessage } from "../../session/schemas.ts"
import type { Session } from "../../session/session.ts"
import type { CompletedSession } from "./codec.ts"
import type { Version2026 } from "./line-items-request-schemas.ts"
import type { Total } from "./line-items-response-schemas.ts"

const renames: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\$\.items(?=\[|$)/, "$.line_items"],
  [/^\$\.fulfillment_address(?=\.|$)/, "$.fulfillment_details.address"],
  [/^\$\.fulfillment_option_id$/, "$.selected_fulfillment_options[0].option_id"],
  [/^\$\.payment_data\.provider$/, "$.payment_data.handler_id"]
]

export const param2026 = (path: string): string => {
  for (const [pattern, replacement] of renames) {
    if (pattern.test(path)) return path.replace(pattern, replacement)
  }
  return path
}

const total = (type: Total["type"], display_text: string, amount: number): Total => ({ type, display_text, amount })

const lineItem = (line: PlainLine) => ({
  id: line.id,
  item: { id: line.item.id },
  quantity: line.item.quantity,
  unit_amount: line.base_amount / line.item.quantity,
  totals: [
    total("items_base_amount", "Base amount", line.base_amount),
    total("discount", "Discount", line.discount),
    total("subtotal", "Subtotal", line.subtotal),
    total("tax", "Tax", line.tax),
    total("total", "Total", line.total)
  ]
})

const fulfillmentOption = (option: PlainOption) => {
  const totals = [
    total("fulfillment", option.title, option.subtotal),
    total("tax", "Tax", option.tax),
    total("total", "Total", option.total)
  ]
  const common = { id: option.id, title: option.title, description: option.subtitle, totals }
  return option.type === "shipping"
    ? {
      type: option.type,
      ...common,
      carrier: option.carrier,
      earliest_delivery_time: option.earliest_delivery_time,
      latest_delivery_time: option.latest_delivery_time
    }
    : { type: option.type, ...common }
}

/** Link types of this format; `seller_shop_policies` has no counterpart here and is not shown. */
const LINK_TYPES = new Set(["terms_of_use", "privacy_policy"])

const fulfillmentDetails = (session: Session) => {
  const { company, ...contact }: FulfillmentContact = session.details?.fulfillment_contact ?? {}
  const address = session.fulfillment_address
  const details = {
    ...contact,
    ...(address === undefined ? {} : { address: company === undefined ? address : { ...address, company } })
  }
  return Object.keys(details).length === 0 ? {} : { fulfillment_details: details }
}

const selectedOptions = (session: Session) => {
  const option = session.fulfillment_options.find((o) => o.id === session.fulfillment_option_id)
  return option === undefined ? {} : {
    selected_fulfillment_options: [{
      type: option.type,
      option_id: option.id,
      item_ids: [...new Set(session.items.map((item) => item.id))]
    }]
  }
}

const REJECTED_CODE = /^\$\.discounts\.codes\[(\d+)\]$/

/** A rejected code's note is a warning with the reason as its code, as the discount extension has it. */
const message2026 = (session: Session) => (message: PlainMessage) => {
  const renamed = message.param === undefined ? message : { ...message, param: param2026(message.param) }
  const index = message.type === "info" && message.param !== undefined
    ? REJECTED_CODE.exec(message.param)?.[1]
    : undefined
  if (index === undefined) return renamed
  const code = session.discounts?.codes[Number(index)]
  const rejection = session.discounts?.rejected.find((r) => r.code === code && r.message === message.content)
  return rejection === undefined ? renamed : {
    type: "warning" as const,
    code: rejection.reason,
    param: message.param!,
    content_type: message.content_type,
    content: message.content
  }
}

const capabilities = (session: Session) => {
  const { interventions, ...rest } = session.capabilities
  return {
    ...rest,
    ...(interventions === undefined ? {} : {
      interventions: defined({
        supported: interventions.supported,
        required: interventions.required,
        enforcement: interventions.enforcement
      })
    })
  }
}

const signal = (signals: JsonObject | undefined, key: string, max: number): string | undefined => {
  const value = signals?.[key]
  return typeof value === "string" ? value.slice(0, max) : undefined
}

/**
 * From what the agent told of the buyer's browser; what it did not tell is unknown to the merchant:
 * any Accept header, an empty address or user agent, no JavaScript (so no screen data is due).
 */
const browserChannel = (session: Session) => {
  const signals = session.details?.risk_signals
  const language = signal(signals, "accept_language", 256)?.split(",")[0]?.split(";")[0]?.trim() ||
    session.details?.locale || "en"
  return {
    type: "browser" as const,
    browser: {
      accept_header: "*/*",
      ip_address: signal(signals, "ip_address", 45) ?? "",
      javascript_enabled: false,
      language: language.slice(0, 35),
      user_agent: signal(signals, "user_agent", 1024) ?? ""
    }
  }
}

/** What the agent authenticates with, while the session waits for it. */
const authenticationMetadata = (version: Version2026, session: Session) => {
  const request = session.authentication
  if (session.status !== "authentication_required" || request === undefined) return {}
  return {
    authentication_metadata: isAtLeast(version, "2026-04-17")
      ? request
      : { channel: browserChannel(session), ...request }
  }
}

export const encodeSession = (version: Version2026) => (session: Session) => {
  const details = session.details
  const buyer = details?.buyer ?? session.buyer
  return {
    id: session.id,
    protocol: { version },
    capabilities: capabilities(session),
    status: session.status,
    currency: session.currency,
    line_items: session.line_items.map(lineItem),
    fulfillment_options: session.fulfillment_options.map(fulfillmentOption),
    totals: session.totals,
    messages: session.messages.map(message2026(session)),
    links: session.links.filter((link) => LINK_TYPES.has(link.type)),
    ...(buyer === undefined ? {} : { buyer }),
    ...fulfillmentDetails(session),
    ...selectedOptions(session),
    ...defined({ locale: details?.locale, timezone: details?.timezone, metadata: details?.metadata }),
    ...authenticationMetadata(version, session),
    ...(session.discounts === undefined ? {} : { discounts: session.discounts }),
    created_at: session.created_at,
    updated_at: session.updated_at,
    expires_at: session.expires_at
  }
}

/** A completed session: 2026-04-17 types its order and shows the order notes as its confirmation. */
export const encodeSessionWithOrder = (version: Version2026) => {
  const session = encodeSession(version)
  return (completed: CompletedSession) => {
    const notes = completed.details?.order_notes
    return {
      ...session(completed),
      order: version === "2026-04-17"
        ? {
          type: "order",
          ...completed.order,
          ...(notes === undefined ? {} : { confirmation: { order_notes: notes } })
        }
        : completed.order
    }
  }
}
