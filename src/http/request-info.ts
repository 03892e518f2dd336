/** What the outer request frame knows about a request, shared with the Elysia hooks. */
export interface RequestInfo {
  id: string
  startedAt: number
  organisationId?: string
  tokenId?: string
}

const infos = new WeakMap<Request, RequestInfo>()

/** A client's X-Request-Id is echoed only when short and plain; otherwise a fresh one is made. */
const PLAIN_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

export function beginRequest(request: Request): RequestInfo {
  const given = request.headers.get('x-request-id')
  const info: RequestInfo = {
    id: given !== null && PLAIN_REQUEST_ID.test(given) ? given : crypto.randomUUID(),
    startedAt: performance.now(),
  }
  infos.set(request, info)
  return info
}

export function requestInfo(request: Request): RequestInfo {
  let info = infos.get(request)
  if (!info) info = beginRequest(request)
  return info
}
