/**
 * The request target (path and query) of a request, read from `request.url` without trusting
 * it to be an absolute URL.
 *
 * Bun builds `request.url` as `http://` + the `Host` header + the target only when the Host
 * passes a check of its bytes; otherwise (HTTP/1.0 without Host, an empty Host, `Host: a b`)
 * `request.url` is the bare target, `/healthz`. A Host whose bytes pass but whose structure does
 * not (`Host: [::1`, `Host: h:99999`) gives an absolute URL that `new URL()` refuses. Either way
 * `new URL(request.url)` throws, and a framework that finds the path by offset in the URL finds
 * the wrong one. The service never uses the Host (it builds no absolute URL and serves one
 * site), so it takes the target, and serves the request as if the Host were its own.
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
