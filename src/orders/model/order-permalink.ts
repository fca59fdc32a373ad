/** The buyer's capability URL `<base>/order-status/<token>`: its random token alone opens the order's page. */
export const ORDER_STATUS_PATH = "/order-status"

export const permalinkUrl = (publicBaseUrl: string, token: string): string =>
  `${publicBaseUrl}${ORDER_STATUS_PATH}/${token}`

const TOKEN_IN_URL = /\/order-status\/([0-9A-Za-z]{22})$/

/** The token of a permalink URL; undefined for any other URL. */
export const permalinkTokenOf = (url: string): string | undefined => TOKEN_IN_URL.exec(url)?.[1]

/** Whether `token` has the shape of a permalink token (anything else is not looked up). */
export const isPermalinkToken = (token: string): boolean => /^[0-9A-Za-z]{22}$/.test(token)
