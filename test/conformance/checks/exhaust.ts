import { expect } from 'bun:test'
import { RateLimitedSchema } from '../../../src/contract/schemas.ts'
import { expectError, expectSchema, expectStatus } from '../assertions.ts'
import type { CheckGroup } from '../check.ts'
import type { Exchange } from '../client.ts'
import { WINDOW_MS } from '../pacer.ts'
import { advertisedLimit } from '../client.ts'

/** Statuses of answers that counted in the window (401, 402 and 429 do not). */
const COUNTED = new Set([200, 400, 503])

export const exhaustChecks: CheckGroup = {
  title: 'spending the whole minute window',
  checks: [
    {
      name: 'once the window is spent the next request is 429 rate_limited with Retry-After, and after Retry-After seconds a request passes',
      // Up to a whole window (as large as the server says) and the refused one, and the one after the wait.
      cost: { main: 2 },
      spendsWindow: 'main',
      needs: ['API_CONTRACT_EXHAUST'],
      async run({ client, clock, say }) {
        const send = () => client.request('/v1/queues', { as: 'main', unpaced: true })
        const limit = advertisedLimit(client)
        let refused: Exchange | undefined
        for (let i = 0; i <= limit && !refused; i++) {
          const exchange = await send()
          if (exchange.status === 429) refused = exchange
          else expectStatus(exchange, 200)
        }
        if (!refused) throw new Error(`${limit + 1} requests in a row were all accepted, against an advertised limit of ${limit}`)
        const body = expectError(refused, 'rate_limited')
        expectSchema(RateLimitedSchema, body, 'the 429 body')
        const retryAfter = Number(refused.headers.get('retry-after'))
        expect(body.retryAfter).toBe(retryAfter)
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000)
        expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
        // The server never accepted more than the limit of this run's requests within one window.
        const windowStart = refused.at - WINDOW_MS
        const accepted = client.exchanges.filter((e) => e.role === 'main' && COUNTED.has(e.status) && e.at > windowStart)
        expect(accepted.length).toBeLessThanOrEqual(limit)

        say(`contract: waiting ${retryAfter} s, as Retry-After says, for API_TOKEN's window to let a request through`)
        await clock.sleep(retryAfter * 1000)
        expectStatus(await send(), 200)
      },
    },
  ],
}
