/**
 * The request target (path and query) of a request, read from `request.url` without trusting it
 * to be an absolute URL: Bun leaves it bare (`/healthz`) when the Host header fails its check of
 * the bytes, and `new URL()` refuses some that pass (`Host: [::1`). The service never uses the
 * Host, so it takes the target and serves the request as if the Host were its own.
 */

/** The path and query of `url` as Bun gave it: `/x?y` from `http://host/x?y`, from `/x?y`, or from `http://[::1/x?y`. */
export function requestTarget(url: string): string {
  if (url.startsWith('/')) return url
  const scheme = url.indexOf('://')
  // Bun never lets '/', '?' or '#' into the authority it writes, so the first '/' after it starts the path.
  const path = scheme === -1 ? -1 : url.indexOf('/', scheme + 3)
  if (path !== -1) return url.slice(path)
  const query = scheme === -1 ? -1 : url.indexOf('?', scheme + 3)
  return query === -1 ? '/' : `/${url.slice(query)}`
}
