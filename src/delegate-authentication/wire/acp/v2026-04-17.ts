/** The Delegate Authentication API's wire format (2026-04-17, the only version with it); unknown keys are ignored. */
import { Schema } from "effect"
import { optional } from "../../../shared/schema-helpers.ts"
import { AuthenticationStatus } from "../../model/authentication-session.ts"

const Bounded = (max: number) => Schema.String.pipe(Schema.maxLength(max))

export const AcquirerDetailsWire = Schema.Struct({
  acquirer_bin: Bounded(11),
  acquirer_country: Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/)),
  acquirer_merchant_id: Bounded(35),
  merchant_name: Bounded(40),
  requestor_id: optional(Bounded(35))
})

export const BrowserInfo = Schema.Struct({
  accept_header: Schema.String,
  ip_address: Bounded(45),
  javascript_enabled: Schema.Boolean,
  language: Bounded(35),
  user_agent: Schema.String,
  color_depth: optional(Schema.Int),
  java_enabled: optional(Schema.Boolean),
  screen_height: optional(Schema.Int),
  screen_width: optional(Schema.Int),
  timezone_offset: optional(Schema.Int)
}).pipe(
  Schema.filter((browser) =>
    !browser.javascript_enabled ||
    (browser.color_depth !== undefined && browser.java_enabled !== undefined &&
      browser.screen_height !== undefined && browser.screen_width !== undefined &&
      browser.timezone_offset !== undefined) ||
    "with javascript_enabled, color_depth, java_enabled, screen_height, screen_width and timezone_offset are required"
  )
)

export const Channel = Schema.Struct({ type: Schema.Literal("browser"), browser: BrowserInfo })

const HttpUrl = Schema.String.pipe(Schema.maxLength(2048), Schema.pattern(/^https?:\/\/[^\s]+$/))

export const FlowPreference = Schema.Struct({
  type: Schema.Literal("challenge", "frictionless"),
  challenge: optional(Schema.Struct({ type: Schema.Literal("mandated", "preferred") })),
  frictionless: optional(Schema.Struct({}))
})

const Address = Schema.Struct({
  name: Bounded(256),
  line_one: Bounded(60),
  line_two: optional(Bounded(60)),
  city: Bounded(60),
  state: Schema.String,
  country: Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2}$/)),
  postal_code: Bounded(20)
})

export const ShopperDetails = Schema.Struct({
  name: optional(Schema.String),
  email: optional(Schema.String.pipe(Schema.pattern(/^[^\s@]+@[^\s@]+$/))),
  phone_number: optional(Schema.String),
  address: optional(Address)
})

export const CreateAuthenticationRequest = Schema.Struct({
  merchant_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  acquirer_details: optional(AcquirerDetailsWire),
  payment_method: Schema.Struct({
    type: Schema.Literal("card"),
    number: Schema.String.pipe(Schema.pattern(/^\d{12,19}$/)),
    exp_month: Schema.String.pipe(Schema.pattern(/^(0[1-9]|1[0-2])$/)),
    exp_year: Schema.String.pipe(Schema.pattern(/^\d{4}$/)),
    name: Schema.String.pipe(Schema.maxLength(256))
  }),
  amount: Schema.Struct({
    value: Schema.Int.pipe(Schema.positive()),
    currency: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))
  }),
  channel: optional(Channel),
  checkout_session_id: optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  flow_preference: optional(FlowPreference),
  challenge_notification_url: optional(HttpUrl),
  shopper_details: optional(ShopperDetails)
})
export type CreateAuthenticationRequest = typeof CreateAuthenticationRequest.Type

export const AuthenticateRequest = Schema.Struct({
  fingerprint_completion: Schema.Literal("Y", "N", "U"),
  channel: optional(Channel),
  checkout_session_id: optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  challenge_notification_url: optional(HttpUrl),
  shopper_details: optional(ShopperDetails)
})
export type AuthenticateRequest = typeof AuthenticateRequest.Type

export const Action = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("fingerprint"),
    fingerprint: Schema.Struct({ three_ds_method_url: Schema.String, three_ds_server_trans_id: Schema.String })
  }),
  Schema.Struct({
    type: Schema.Literal("challenge"),
    challenge: Schema.Struct({
      acs_url: Schema.String,
      acs_trans_id: Schema.String,
      three_ds_server_trans_id: Schema.String,
      message_version: Schema.String
    })
  })
)

export const AuthenticationResultWire = Schema.Struct({
  trans_status: Schema.String,
  electronic_commerce_indicator: optional(Schema.String),
  three_ds_cryptogram: optional(Schema.String),
  transaction_id: Schema.String,
  three_ds_server_trans_id: Schema.String,
  version: Schema.String,
  authentication_value: optional(Schema.String),
  trans_status_reason: optional(Schema.String),
  cardholder_info: optional(Schema.String)
})

export const AuthenticationSessionWire = Schema.Struct({
  authentication_session_id: Schema.String,
  status: AuthenticationStatus,
  action: optional(Action)
}).annotations({ identifier: "DelegateAuthenticationSession" })

export const AuthenticationSessionWithResultWire = Schema.Struct({
  ...AuthenticationSessionWire.fields,
  authentication_result: optional(AuthenticationResultWire)
}).annotations({ identifier: "DelegateAuthenticationSessionWithResult" })
