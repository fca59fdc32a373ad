/**
 * The order's `permalink_url`, the "persistent URL for order details and status" an agent hands
 * the buyer: a capability URL, `<public base URL>/order-status/<token>`, whose token (22 random
 * base62 characters, about 131 bits) is the only thing that opens the buyer's order page, with no
 * API key. The token is part of the stored order (its `permalink_url`), so it survives restarts;
 * the stores find an order by it.
 */
export const ORDER_STATUS_PATH = "/order-status"

export const permalinkUrl = (publicBaseUrl: string, token: string): string =>
  `${publicBaseUrl}${ORDER_STATUS_PATH}/${token}`

const TOKEN_IN_URL = /\/order-status\/([0-9A-Za-z]{22})$/

/** The token of a permalink URL, or undefined for any other URL (orders made before tokens). */
export const permalinkTokenOf = (url: string): string | undefined => TOKEN_IN_URL.exec(url)?.[1]

/** Whether `token` has the shape of a permalink token (anything else is not looked up). */
export const isPermalinkToken = (token: string): boolean => /^[0-9A-Za-z]{22}$/.test(token)
