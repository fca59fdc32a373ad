/**
 * Which provider charges a credential: Stripe for a handler whose PSP is `stripe`, and for the legacy
 * `{provider: "stripe", token: "spt_…"}`; the built-in processor for everything else (the legacy shape
 * names `stripe` as an alias of the built-in processor for its test tokens and `vt_` tokens).
 */
import type { PaymentCredential } from "../../payments/model/payment.ts"

export const STRIPE_PSP = "stripe"

/** A Stripe shared payment granted token id. */
export const isSharedPaymentToken = (token: string): boolean => /^spt_[A-Za-z0-9_]{1,64}$/.test(token)

export const chargedByStripe = (credential: PaymentCredential): boolean =>
  credential.kind === "handler"
    ? credential.psp === STRIPE_PSP
    : credential.provider === STRIPE_PSP && isSharedPaymentToken(credential.token)

/**
 * For the settlement, which has only the attempt: its credential reference is the token itself for a
 * Stripe payment (`credentialRef`), and a Stripe credential is always a shared payment token (`authorize`).
 */
export const attemptChargedByStripe = (credentialRef: string): boolean => isSharedPaymentToken(credentialRef)
