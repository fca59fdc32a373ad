/**
 * This process's own base URL as it can call itself (its order-event receiver, its Feed API): the loopback
 * address when it listens on every interface (a PUBLIC_BASE_URL may be unreachable from inside), else its HOST.
 */
export const selfBaseUrl = (host: string, port: number, tls: boolean): string => {
  const wildcard = host === "0.0.0.0" || host === "::" || host === ""
  const name = wildcard ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host
  return `${tls ? "https" : "http"}://${name}:${port}`
}
