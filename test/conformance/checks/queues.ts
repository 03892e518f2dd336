import { expect } from 'bun:test'
import { QueuesResponseSchema, type QueuesResponse } from '../../../src/contract/schemas.ts'
import { compareText, expectError, expectSchema, expectStatus } from '../assertions.ts'
import type { CheckGroup } from '../check.ts'
import { canonicalZoneName } from '../../../src/contract/time-zone.ts'

/** The first place where `items` break the order (name, then id), or null. */
function disorder(items: readonly { id: string; name: string }[]): string | null {
  for (let i = 1; i < items.length; i++) {
    const [a, b] = [items[i - 1]!, items[i]!]
    if ((compareText(a.name, b.name) || compareText(a.id, b.id)) >= 0) return `${a.name} (${a.id}) is not before ${b.name} (${b.id})`
  }
  return null
}

export const queueChecks: CheckGroup = {
  title: 'GET /v1/queues',
  checks: [
    {
      name: 'every location with its queues: the contract shape, locations and queues ordered by name then id, time zones by their IANA names',
      cost: { main: 1 },
      async run({ client }) {
        const exchange = await client.get('/v1/queues')
        expectStatus(exchange, 200)
        expect(exchange.headers.get('content-type')).toStartWith('application/json')
        const body = exchange.json<QueuesResponse>()
        expectSchema(QueuesResponseSchema, body, 'GET /v1/queues')
        expect({ locations: disorder(body.locations) }).toEqual({ locations: null })
        for (const location of body.locations) expect({ location: location.id, queues: disorder(location.queues) }).toEqual({ location: location.id, queues: null })
        // A location's zone: null, or an IANA zone by its current name (never Asia/Calcutta, never IST).
        for (const { id, timeZone } of body.locations) if (timeZone !== null) expect({ location: id, timeZone: canonicalZoneName(timeZone) }).toEqual({ location: id, timeZone })
      },
    },
    {
      name: "the ids of ticket rows are those of /v1/queues: each row's queue belongs to its location",
      cost: { main: 1 },
      async run(context) {
        const exchange = await context.client.get('/v1/queues')
        expectStatus(exchange, 200)
        const queueLocation = new Map<string, string>()
        for (const location of exchange.json<QueuesResponse>().locations) for (const queue of location.queues) queueLocation.set(queue.id, location.id)
        for (const row of context.sample().reference.page.items) {
          expect({ ticket: row.id, locationOfQueue: queueLocation.get(row.queueId) }).toEqual({ ticket: row.id, locationOfQueue: row.locationId })
        }
      },
    },
    {
      name: 'any query parameter is 400 naming it',
      cost: { main: 1 },
      async run({ client }) {
        expectError(await client.get('/v1/queues?locationId=x'), 'invalid_request', 'locationId')
      },
    },
  ],
}
