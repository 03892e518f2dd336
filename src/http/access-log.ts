/** Anything shaped like an API token in a logged query string is replaced, so no token reaches a log. */
const TOKEN_LIKE = /svc_[A-Za-z0-9]*/g

/** The query string for the access log, with token-like values redacted and long ones cut. */
export function redactQuery(search: string): string | undefined {
  if (search === '' || search === '?') return undefined
  let decoded: string
  try {
    decoded = decodeURIComponent(search.slice(1).replaceAll('+', ' '))
  } catch {
    decoded = search.slice(1)
  }
  const redacted = decoded.replace(TOKEN_LIKE, 'svc_[redacted]')
  return redacted.length > 512 ? `${redacted.slice(0, 512)}…` : redacted
}
