import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Client } from '../../src/client/index.ts'
import type { TestServer } from '../support/harness.ts'
import { startLaggingPair, type LaggingPair } from '../support/lagging-copy.ts'

/**
 * Reads never go backwards for one client (docs/loading.md): behind a balancer that alternates
 * between a fresh copy and one that lags, a Client sends the X-Changes-Token of its latest
 * answer as X-Changes-Floor, so the lagging copy answers 503 copy_behind (retried, on the
 * other copy) instead of rows from before what the client has read.
 */
const RANGE = { from: '2026-01-01T00:00:00.000Z', to: '2026-01-03T00:00:00.000Z' }
let pair: LaggingPair
let fresh: TestServer
let lagging: TestServer
let token: string

beforeAll(async () => {
  pair = await startLaggingPair(100, 50)
  ;({ fresh, lagging, token } = pair)
})

afterAll(() => pair?.close())

/** A balancer in the client's fetch: fresh, lagging, fresh, … in turn. */
function alternating(): { fetch: typeof globalThis.fetch; sentFloors: (string | null)[] } {
  let turn = 0
  const sentFloors: (string | null)[] = []
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const target = turn++ % 2 === 0 ? fresh : lagging
    const url = new URL(String(input))
    sentFloors.push(new Headers(init?.headers).get('x-changes-floor'))
    return globalThis.fetch(target.base + url.pathname + url.search, init)
  }) as typeof globalThis.fetch
  return { fetch, sentFloors }
}

test('after an answer from the fresh copy, the lagging one is never read: 503 copy_behind, retried, then the fresh rows', async () => {
  const balancer = alternating()
  const client = new Client({ baseUrl: 'http://balancer.invalid', token, fetch: balancer.fetch, sleep: async () => {} })
  const counts: number[] = []
  for (let i = 0; i < 4; i++) {
    let rows = 0
    for await (const _ of client.tickets({ ...RANGE, limit: 500 })) rows++
    counts.push(rows)
  }
  // Every read has the writer's 150 rows; none the lagging copy's 100.
  expect(counts).toEqual([150, 150, 150, 150])
  expect(balancer.sentFloors[0]).toBeNull()
  expect(balancer.sentFloors.slice(1).every((floor) => floor !== null)).toBe(true)
})

test('/v1/queues holds to the floor too, once the client has read tickets; an explicit floor wins', async () => {
  const balancer = alternating()
  const client = new Client({ baseUrl: 'http://balancer.invalid', token, fetch: balancer.fetch, sleep: async () => {} })
  for await (const _ of client.pages({ ...RANGE, limit: 500 })); // the fresh copy
  await client.queues() // the lagging copy: copy_behind, then the fresh one
  expect(balancer.sentFloors).toHaveLength(3)
  expect(balancer.sentFloors[0]).toBeNull()
  expect(balancer.sentFloors[1]).toBeString()
  expect(balancer.sentFloors[2]).toBe(balancer.sentFloors[1]!)
  await client.queues({ floor: 'not-a-token' }).catch(() => {})
  expect(balancer.sentFloors.at(-1)).toBe('not-a-token')
})
