import { expect } from 'bun:test'
import { expectError, expectStatus } from '../assertions.ts'
import type { Check, CheckGroup } from '../check.ts'

/**
 * What the service answers around the three operations, none of it needing a token: unknown
 * paths, other methods, the CORS preflight, the request id. No request here carries a token, so
 * that a method that could write never reaches a server with credentials.
 */

export const OPERATIONS = ['/v1/queues', '/v1/tickets', '/v1/exports/tickets.csv'] as const

function methodCheck(method: string): Check {
  return {
    name: `${method} on an operation: 405 with Allow: GET, HEAD`,
    cost: { none: 1 },
    async run({ client }) {
      const exchange = await client.request('/v1/tickets', { method })
      expectStatus(exchange, 405)
      expect(exchange.headers.get('allow')).toBe('GET, HEAD')
      expectError(exchange, 'method_not_allowed')
    },
  }
}

export const frameChecks: CheckGroup = {
  title: 'routing, preflight and request ids',
  checks: [
    {
      name: 'an unknown path is 404 not_found, whatever the method, without a token',
      cost: { none: 4 },
      async run({ client }) {
        expectError(await client.request('/v2/queues'), 'not_found')
        expectError(await client.request('/v1/queues/extra'), 'not_found')
        expectError(await client.request('/v1/queues/'), 'not_found')
        expectError(await client.request('/v1/nothing', { method: 'POST' }), 'not_found')
      },
    },
    ...['POST', 'PUT', 'PATCH', 'DELETE'].map(methodCheck),
    {
      name: 'HEAD on an operation: what GET gets, without the body',
      cost: { none: 2 },
      async run({ client }) {
        const head = await client.request('/v1/queues', { method: 'HEAD' })
        const get = await client.request('/v1/queues')
        expectStatus(head, get.status)
        expect(head.headers.get('www-authenticate')).toBe(get.headers.get('www-authenticate'))
        expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
        expect(head.text).toBe('')
      },
    },
    {
      name: 'CORS preflight of each operation: 204 without a token, any origin, GET and HEAD, Authorization allowed',
      cost: { none: OPERATIONS.length },
      async run({ client }) {
        for (const path of OPERATIONS) {
          const exchange = await client.request(path, { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' } })
          expectStatus(exchange, 204)
          expect(exchange.headers.get('access-control-allow-origin')).toBe('*')
          expect(exchange.headers.get('access-control-allow-methods')).toBe('GET, HEAD')
          expect(exchange.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('authorization')
        }
      },
    },
    {
      name: 'X-Request-Id: a short plain client id is echoed, anything else (a token-shaped one included) replaced',
      cost: { none: 3 },
      async run({ client }) {
        const echoed = await client.request('/v1/queues', { headers: { 'X-Request-Id': 'loader-run-42' } })
        expect(echoed.headers.get('x-request-id')).toBe('loader-run-42')
        const odd = '<script>' + 'x'.repeat(100)
        const replaced = await client.request('/v1/queues', { headers: { 'X-Request-Id': odd } })
        expect(replaced.headers.get('x-request-id')).not.toBe(odd)
        expect(replaced.headers.get('x-request-id')).toMatch(/^[\w.-]{8,64}$/)
        // Short and plain, but shaped like a token: never echoed (nor logged).
        const tokenShaped = `svc_${'A1b2C3d4E5'.repeat(3)}Zz9Yy8Xx`
        const notEchoed = await client.request('/v1/queues', { headers: { 'X-Request-Id': tokenShaped } })
        expect(notEchoed.headers.get('x-request-id')).not.toMatch(/svc_/i)
      },
    },
  ],
}
