/** The cart's `continue_url`: the buyer page of its hand-off token (22 base62 characters, as `Ids` makes). */
export const CART_PAGE_PATH = "/cart"

export const continueUrl = (publicBaseUrl: string, token: string): string =>
  `${publicBaseUrl}${CART_PAGE_PATH}/${token}`

export const isHandoffToken = (token: string): boolean => /^[0-9A-Za-z]{22}$/.test(token)
