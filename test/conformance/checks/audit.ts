import { expect } from 'bun:test'
import type { TSchema } from '@sinclair/typebox'
import { ERROR_STATUS } from '../../../src/contract/vocabulary.ts'
import { DemoQuotaSchema, ErrorSchema, RateLimitedSchema } from '../../../src/contract/schemas.ts'
import { expectSchema } from '../assertions.ts'
import type { CheckGroup, SuiteContext } from '../check.ts'
import type { Exchange } from '../client.ts'
import { WINDOW_MS } from '../pacer.ts'
import { advertisedLimit } from '../client.ts'
import { rateLimitItems } from '../ratelimit-fields.ts'
import { DEMO_DAILY_QUOTA } from './demo.ts'

/**
 * Checks over every answer the run received, so that a fault shows wherever it happens (a 500
 * from any request, a header missing from one answer). They run last and make no request.
 */

const BODY_SCHEMA: Record<string, TSchema> = { rate_limited: RateLimitedSchema, demo_quota_exceeded: DemoQuotaSchema }

/** What an error body must not contain: a stack frame, SQL, a file path, an exception's name. */
const INTERNALS: [string, RegExp][] = [
  ['a stack frame', /\bat \S+ \(|\bat \/|\.(ts|js|mjs|cjs):\d+/],
  ['SQL', /\b(SELECT\s.+\sFROM|INSERT INTO|UPDATE \S+ SET|SQLITE_\w+|sqlite3?)\b/i],
  ['a file path', /(^|[\s"'(])\/(home|srv|tmp|usr|var|opt|app|work|root)\//],
  ['an exception name', /\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/],
]

/** The headers a browser client needs and CORS must expose. */
const EXPOSED = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Content-Disposition', 'X-Service-Demo', 'X-Changes-Token']

const errors = (context: SuiteContext) => context.client.exchanges.filter((e) => e.status >= 400 && e.method !== 'HEAD')
const where = (exchange: Exchange) => `${exchange.method} ${exchange.path} (${exchange.status})`

/** Answers given after a token was recognised: they show its window (401 and routing answers do not). */
const withWindow = (exchange: Exchange) => exchange.role !== 'none' && exchange.role !== 'revoked' && exchange.status !== 401

export const auditChecks: CheckGroup = {
  title: "every answer of the run",
  checks: [
    {
      name: 'every error answer has the one body: a known code with its status, a message, requestId equal to X-Request-Id',
      cost: {},
      async run(context) {
        for (const exchange of errors(context)) {
          expect({ at: where(exchange), contentType: exchange.headers.get('content-type') }).toEqual({ at: where(exchange), contentType: 'application/json' })
          const body = exchange.json()
          const code = String(body.error)
          const status: number | undefined = ERROR_STATUS[code as keyof typeof ERROR_STATUS]
          expect({ at: where(exchange), status }).toEqual({ at: where(exchange), status: exchange.status })
          expectSchema(BODY_SCHEMA[code] ?? ErrorSchema, body, where(exchange))
          expect({ at: where(exchange), requestId: body.requestId }).toEqual({ at: where(exchange), requestId: exchange.headers.get('x-request-id') })
          if (body.param !== undefined) expect({ at: where(exchange), status: exchange.status }).toEqual({ at: where(exchange), status: 400 })
        }
      },
    },
    {
      name: 'no error answer says anything internal: no stack trace, SQL, file path or exception name',
      cost: {},
      async run(context) {
        const leaks = errors(context).flatMap((exchange) =>
          INTERNALS.filter(([, pattern]) => pattern.test(exchange.text)).map(([what]) => `${where(exchange)}: ${what} in ${JSON.stringify(exchange.text.slice(0, 200))}`),
        )
        expect(leaks).toEqual([])
      },
    },
    {
      name: 'hygiene: X-Request-Id on every answer; no-store and nosniff on data and errors; CORS for any origin with the limit headers exposed',
      cost: {},
      async run(context) {
        for (const exchange of context.client.exchanges) {
          const headers = exchange.headers
          const dataOrError = (exchange.path.startsWith('/v1/') && exchange.method === 'GET') || exchange.status >= 400
          const exposed = (headers.get('access-control-expose-headers') ?? '').split(/\s*,\s*/).map((h) => h.toLowerCase())
          expect({
            at: where(exchange),
            requestId: Boolean(headers.get('x-request-id')),
            noStore: dataOrError ? headers.get('cache-control') : 'no-store',
            nosniff: dataOrError ? headers.get('x-content-type-options') : 'nosniff',
            allowOrigin: headers.get('access-control-allow-origin'),
            unexposed: exchange.method === 'OPTIONS' ? [] : EXPOSED.filter((h) => !exposed.includes(h.toLowerCase())),
          }).toEqual({ at: where(exchange), requestId: true, noStore: 'no-store', nosniff: 'nosniff', allowOrigin: '*', unexposed: [] })
        }
      },
    },
    {
      name: 'rate-limit headers on every answer to a known token: the same limit on each (60 by the contract, or as configured), remaining and reset in range, RateLimit and RateLimit-Policy repeating them',
      cost: {},
      async run(context) {
        const advertised = advertisedLimit(context.client)
        for (const exchange of context.client.exchanges.filter(withWindow)) {
          const header = (name: string) => exchange.headers.get(name)
          const limit = Number(header('x-ratelimit-limit'))
          const remaining = header('x-ratelimit-remaining')
          const reset = header('x-ratelimit-reset')
          const counted = exchange.status !== 402 && exchange.status !== 429
          const policy = rateLimitItems(header('ratelimit-policy'))
          const current = rateLimitItems(header('ratelimit'))
          expect({
            at: where(exchange),
            limit,
            remaining: /^\d+$/.test(remaining ?? '') && Number(remaining) <= limit - (counted ? 1 : 0),
            reset: /^\d+$/.test(reset ?? '') && Number(reset) >= (counted ? 1 : 0) && Number(reset) <= WINDOW_MS / 1000,
            policy: policy?.minute,
            current: current?.minute,
            day: policy?.day,
            retryAfter: exchange.status === 429 ? /^[1-9]\d*$/.test(header('retry-after') ?? '') : true,
          }).toEqual({
            at: where(exchange),
            limit: advertised,
            remaining: true,
            reset: true,
            policy: { q: limit, w: WINDOW_MS / 1000 },
            current: { r: Number(remaining), t: Number(reset) },
            // Only a demo organisation has a day's quota.
            day: exchange.role === 'demo' ? { q: DEMO_DAILY_QUOTA, w: 86_400 } : undefined,
            retryAfter: true,
          })
        }
      },
    },
  ],
}
