/**
 * The URL the server is reached at, as the logs and the first start's instructions show it: a
 * wildcard host is shown as localhost, an IPv6 address in brackets.
 */
export function shownUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
}
