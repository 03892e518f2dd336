import { expect } from 'bun:test'
import { expectStatus } from '../assertions.ts'
import type { CheckGroup } from '../check.ts'

const ATTEMPTS = 3

export const rateLimitChecks: CheckGroup = {
  title: 'the minute window',
  checks: [
    {
      name: 'X-RateLimit-Remaining falls by exactly one per counted request',
      cost: { main: 2 * ATTEMPTS },
      async run({ client }) {
        const remaining = async () => {
          const exchange = await client.get('/v1/queues')
          expectStatus(exchange, 200)
          return Number(exchange.headers.get('x-ratelimit-remaining'))
        }
        // In a sliding window an old request may leave between two of ours, giving the slot back:
        // a pair that falls by zero is tried again; one that falls by two counted a request twice.
        const drops: number[] = []
        for (let attempt = 0; attempt < ATTEMPTS && !drops.includes(1); attempt++) {
          const before = await remaining()
          const drop = before - (await remaining())
          expect(drop).toBeLessThanOrEqual(1)
          drops.push(drop)
        }
        expect(drops).toContain(1)
      },
    },
  ],
}
