import { expect } from 'bun:test'
import { MAX_RANGE_MS, TICKET_FIELDS } from '../../../src/contract/vocabulary.ts'
import type { TicketPage } from '../../../src/contract/schemas.ts'
import { compact, expectStatus, expectedCsv, iso, query } from '../assertions.ts'
import type { CheckGroup } from '../check.ts'
import { dailyDistance, rateLimitItems, secondsToUtcMidnight } from '../ratelimit-fields.ts'

/** The contract's daily quota of a demo organisation. */
export const DEMO_DAILY_QUOTA = 50
/** Clocks of the suite and the server may differ this much (the in-process runner's agree exactly). */
const CLOCK_SLACK_S = 60

export const demoChecks: CheckGroup = {
  title: 'demo organisations',
  checks: [
    {
      name: "RateLimit and RateLimit-Policy add the day's quota (q=50, w=86400); its r falls by one per request and t runs to the next UTC midnight",
      cost: { demo: 2 },
      needs: ['API_DEMO_TOKEN', 'API_CONTRACT_DEMO_OK'],
      async run({ client, clock }) {
        const days: Record<string, number>[] = []
        for (let i = 0; i < 2; i++) {
          const exchange = await client.get('/v1/queues', 'demo')
          expectStatus(exchange, 200)
          const policy = rateLimitItems(exchange.headers.get('ratelimit-policy'))
          expect(policy?.day).toEqual({ q: DEMO_DAILY_QUOTA, w: 86_400 })
          // X-RateLimit-* describe the minute window, not the day.
          expect(policy?.minute?.q).toBe(Number(exchange.headers.get('x-ratelimit-limit')))
          const day = rateLimitItems(exchange.headers.get('ratelimit'))?.day
          expect(day).toBeDefined()
          expect(dailyDistance(day!.t!, secondsToUtcMidnight(clock.now()))).toBeLessThanOrEqual(CLOCK_SLACK_S)
          days.push(day!)
        }
        // Unless the day turned between the two requests, the second spent one more of it.
        if (days[1]!.t! <= days[0]!.t!) expect(days[1]!.r).toBe(days[0]!.r! - 1)
      },
    },
    {
      name: 'the export is marked: demo- file name, X-Service-Demo: 1, a last column demo with 1 on every row',
      cost: { demo: 2 },
      needs: ['API_DEMO_TOKEN', 'API_CONTRACT_DEMO_OK'],
      async run({ client, clock }) {
        // One row of the demo organisation's last 90 days, and the export of its instant.
        const end = Math.ceil(clock.now() / 60_000) * 60_000 + 60_000
        const found = await client.get(`/v1/tickets?${query([['from', iso(end - MAX_RANGE_MS)], ['to', iso(end)], ['limit', '1']])}`, 'demo')
        expectStatus(found, 200)
        const row = found.json<TicketPage>().items[0]
        const from = row?.createdAt ?? iso(end - 86_400_000)
        const to = iso(Date.parse(from) + 1)
        const exchange = await client.get(`/v1/exports/tickets.csv?${query([['from', from], ['to', to]])}`, 'demo')
        expectStatus(exchange, 200)
        expect(exchange.headers.get('content-disposition')).toBe(`attachment; filename="demo-tickets_${compact(from)}_${compact(to)}.csv"`)
        expect(exchange.headers.get('x-service-demo')).toBe('1')
        const lines = exchange.text.split('\r\n')
        expect(lines[0]).toBe(`${TICKET_FIELDS.join(',')},demo`)
        expect(lines.at(-1)).toBe('')
        for (const line of lines.slice(1, -1)) expect(line).toEndWith(',1')
        if (row) expect(lines[1]).toBe(expectedCsv([row], true).split('\r\n')[1])
      },
    },
  ],
}
