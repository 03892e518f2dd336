import { CHANGES_TOKEN_HEADER } from '../contract/vocabulary.ts'

/**
 * Headers every response gets (docs/api.md#browser-use-and-cors, docs/api.md#response-headers): the request id, nosniff, no-store on
 * data and errors (they are private to one organisation), and CORS: bearer tokens are not
 * ambient credentials, so any origin may call, and the headers a client needs are exposed.
 */

export const CORS_EXPOSED_HEADERS = [
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy',
  'Retry-After', 'Content-Disposition', 'X-Service-Demo', 'X-Request-Id', CHANGES_TOKEN_HEADER,
].join(', ')

/** `privateData`: the response holds an organisation's data (any /v1 answer), never to be cached. */
export function decorateResponse(response: Response, requestId: string, { privateData }: { privateData: boolean }): Response {
  const headers = response.headers
  for (const [name, value] of Object.entries(everyResponseHeaders(requestId, privateData || response.status >= 400))) headers.set(name, value)
  return response
}

/**
 * The headers of decorateResponse as one object, for a response made with them (one native
 * call, where setting them one by one on a made response costs one each): see jsonResponse.
 */
export function everyResponseHeaders(requestId: string, noStore: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Request-Id': requestId,
    'X-Content-Type-Options': 'nosniff',
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS,
  }
  if (noStore) headers['Cache-Control'] = 'no-store'
  return headers
}

/** Answer to a CORS preflight: no token needed, 204. */
export function preflightResponse(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'Access-Control-Allow-Methods': 'GET, HEAD',
      'Access-Control-Allow-Headers': 'Authorization, X-Request-Id',
      'Access-Control-Max-Age': '600',
    },
  })
}
