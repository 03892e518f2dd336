import type { Server } from 'bun'

/**
 * A deliberately wrong server: a proxy on a free port in front of the real one that breaks the
 * contract in one way, to show that the suite reports it. Each fault rewrites the request it
 * forwards, or the answer it returns, and passes everything else through untouched.
 */
export interface Fault {
  /** The URL to forward to instead of `url`. */
  request?(url: URL): URL
  /** The answer to give instead of the real one (`answer`, unread, without its framing headers). */
  response?(url: URL, answer: Response): Promise<Response>
}

/** Headers of a forwarded answer; a body that is rewritten gets a length of its own. */
function copyHeaders(answer: Response): Headers {
  const headers = new Headers(answer.headers)
  headers.delete('content-length')
  headers.delete('transfer-encoding')
  return headers
}

/**
 * A body relayed chunk by chunk, `prefix` first. Like the server's export (src/export/csv-stream.ts)
 * it returns to the event loop before it closes: Bun gives a stream that ends in the tick of its
 * first chunk a Content-Length, and the proxy must not change the framing the server chose.
 */
function relay(body: ReadableStream<Uint8Array>, prefix?: Uint8Array): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  let first = prefix
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (first) {
        controller.enqueue(first)
        first = undefined
        return
      }
      const { done, value } = await reader.read()
      if (!done) return controller.enqueue(value)
      await new Promise((resolve) => setImmediate(resolve))
      controller.close()
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

/** Rewrites the JSON body of answers that `applies` to. */
function rewriteJson(applies: (url: URL, answer: Response) => boolean, change: (body: Record<string, unknown>) => void): Fault['response'] {
  return async (url, answer) => {
    if (!applies(url, answer)) return answer
    const body = (await answer.json()) as Record<string, unknown>
    change(body)
    return new Response(JSON.stringify(body), { status: answer.status, headers: copyHeaders(answer) })
  }
}

export const FAULTS = {
  /** (a) Every answer loses X-RateLimit-Remaining. */
  'drops X-RateLimit-Remaining': {
    async response(_url, answer) {
      answer.headers.delete('x-ratelimit-remaining')
      return answer
    },
  },
  /** (b) limit=501 is served as if it were 500: a 200 where the contract wants 400. */
  'answers limit=501 with 200': {
    request(url) {
      const forwarded = new URL(url)
      if (forwarded.searchParams.get('limit') === '501') forwarded.searchParams.set('limit', '500')
      return forwarded
    },
  },
  /** (c) The first two rows of every ticket page change places. */
  'reorders two rows of a page': {
    response: rewriteJson(
      (url, answer) => url.pathname.endsWith('/v1/tickets') && answer.status === 200,
      (body) => {
        const items = body.items as unknown[]
        if (items.length >= 2) [items[0], items[1]] = [items[1], items[0]]
      },
    ),
  },
  /** (d) Uncompressed CSV exports start with a UTF-8 byte-order mark (still streamed). */
  'adds a BOM to the CSV': {
    async response(url, answer) {
      if (!url.pathname.endsWith('.csv') || answer.status !== 200 || answer.headers.get('content-encoding') || !answer.body) return answer
      return new Response(relay(answer.body, new Uint8Array([0xef, 0xbb, 0xbf])), { status: 200, headers: answer.headers })
    },
  },
  /** (e) One request (an unknown parameter) is answered 500 with a stack trace in the body. */
  'sends a 500 body with a stack trace': {
    async response(url, answer) {
      if (!url.searchParams.has('sort')) return answer
      await answer.arrayBuffer()
      const body = {
        error: 'internal',
        message: "TypeError: Cannot read properties of undefined (reading 'sort')\n    at parseTicketQuery (/srv/api/src/tickets/query.ts:48:21)",
        requestId: answer.headers.get('x-request-id'),
      }
      const headers = copyHeaders(answer)
      headers.set('content-type', 'application/json')
      return new Response(JSON.stringify(body), { status: 500, headers })
    },
  },
} satisfies Record<string, Fault>

export type FaultName = keyof typeof FAULTS

/** Starts a proxy to `upstream` with `fault`; stop it with `stop(true)`. */
export function startFaultyProxy(upstream: string, fault: Fault): Server<undefined> {
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      const target = fault.request?.(url) ?? url
      const headers = new Headers(request.headers)
      headers.delete('host')
      // decompress: false passes a gzip body through as the server sent it.
      const answer = await fetch(upstream + target.pathname + target.search, { method: request.method, headers, redirect: 'manual', decompress: false } as RequestInit)
      const chunked = answer.headers.get('transfer-encoding') === 'chunked'
      const body = answer.body && chunked ? relay(answer.body) : answer.body
      const passed = new Response(body, { status: answer.status, headers: copyHeaders(answer) })
      return fault.response ? fault.response(url, passed) : passed
    },
  })
}
