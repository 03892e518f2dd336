import { describe, expect, test } from 'bun:test'
import { CursorCodec } from '../../src/tickets/cursor.ts'
import { parseTicketQuery } from '../../src/tickets/query.ts'
import { ApiError } from '../../src/errors/api-error.ts'

const codec = new CursorCodec('test-signing-key')
const q = (query: string) => parseTicketQuery(new URLSearchParams(query), 'page')
const base = 'from=2026-03-01&to=2026-03-05&queueId=a&queueId=b&status=WAITING'
const position = { createdAt: '2026-03-02T10:00:00.000Z', id: 'tkt,"odd" id' }

function expectCursorError(fn: () => unknown) {
  try {
    fn()
    throw new Error('expected a 400')
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).extra.param).toBe('cursor')
    expect((error as ApiError).status).toBe(400)
  }
}

describe('CursorCodec', () => {
  test('round trip; opaque base64url', () => {
    const cursor = codec.encode('org_1', q(base), position)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(codec.decode('org_1', q(base), cursor)).toEqual(position)
  })

  test('same instants and same sets in another order and another limit: accepted', () => {
    const cursor = codec.encode('org_1', q(base), position)
    const same = 'from=2026-03-01T01:00:00%2B01:00&to=2026-03-05T00:00:00.000Z&status=WAITING&queueId=b&queueId=a&queueId=a&limit=7'
    expect(codec.decode('org_1', q(same), cursor)).toEqual(position)
  })

  test('another query, organisation, key or a tampered cursor: 400 param cursor', () => {
    const cursor = codec.encode('org_1', q(base), position)
    expectCursorError(() => codec.decode('org_1', q(base.replace('to=2026-03-05', 'to=2026-03-06')), cursor))
    expectCursorError(() => codec.decode('org_1', q(base.replace('queueId=b&', '')), cursor))
    expectCursorError(() => codec.decode('org_1', q(base + '&locationId=x'), cursor))
    expectCursorError(() => codec.decode('org_2', q(base), cursor))
    expectCursorError(() => new CursorCodec('another-key').decode('org_1', q(base), cursor))
    const [payload, signature] = cursor.split('.') as [string, string]
    const forged = Buffer.from(JSON.stringify(['2026-03-01T00:00:00.000Z', 'x'])).toString('base64url')
    expectCursorError(() => codec.decode('org_1', q(base), `${forged}.${signature}`))
    expectCursorError(() => codec.decode('org_1', q(base), `${payload}.${signature.slice(1)}A`))
    for (const garbage of ['', '.', 'abc', 'abc.', '.abc', '%%%', 'x'.repeat(5000)]) expectCursorError(() => codec.decode('org_1', q(base), garbage))
  })

  test('length: a cursor for an id of 2,000 characters is accepted; anything over the cap is refused', () => {
    const long = { createdAt: position.createdAt, id: 'i'.repeat(2000) }
    expect(codec.decode('org_1', q(base), codec.encode('org_1', q(base), long))).toEqual(long)
    expectCursorError(() => codec.decode('org_1', q(base), `${'A'.repeat(12_001)}.${'B'.repeat(22)}`))
  })

  test('bound to changedAfter like a filter', () => {
    const changed = codec.encode('org_1', q(`${base}&changedAfter=token-a`), position)
    expect(codec.decode('org_1', q(`${base}&changedAfter=token-a&limit=3`), changed)).toEqual(position)
    expectCursorError(() => codec.decode('org_1', q(base), changed))
    expectCursorError(() => codec.decode('org_1', q(`${base}&changedAfter=token-b`), changed))
    expectCursorError(() => codec.decode('org_1', q(`${base}&changedAfter=token-a`), codec.encode('org_1', q(base), position)))
  })

  test('the cursors of queries without changedAfter are those of before it existed', () => {
    // A cursor handed out by the previous release must still be accepted after an upgrade.
    expect(codec.encode('org_1', q(base), position)).toBe('WyIyMDI2LTAzLTAyVDEwOjAwOjAwLjAwMFoiLCJ0a3QsXCJvZGRcIiBpZCJd.qiKRoFAALDr0UevyBGL2Lw')
  })
})

describe('cursors made by earlier releases', () => {
  // Made before the filters were declared as one table (contract/vocabulary.ts TICKET_FILTERS):
  // a loader paging across an upgrade keeps its cursor.
  const key = new CursorCodec('k'.repeat(64))
  const at = { createdAt: '2026-03-01T10:00:00.000Z', id: 't-1' }
  const made: [string, string][] = [
    ['from=2026-03-01&to=2026-03-02', 'WyIyMDI2LTAzLTAxVDEwOjAwOjAwLjAwMFoiLCJ0LTEiXQ.DFgDdRyutCuWfh-1SFE9Cg'],
    ['from=2026-03-01&to=2026-03-02&queueId=b&queueId=a&status=CALLED&locationId=l', 'WyIyMDI2LTAzLTAxVDEwOjAwOjAwLjAwMFoiLCJ0LTEiXQ.tH-DTIuiYqYL8hDj1-LZMQ'],
    ['from=2026-03-01&to=2026-03-02&changedAfter=x', 'WyIyMDI2LTAzLTAxVDEwOjAwOjAwLjAwMFoiLCJ0LTEiXQ.hK0N8j39IP3Cc0w5fuybvg'],
  ]
  for (const [query, cursor] of made) {
    test(`${query}: the same cursor, still accepted`, () => {
      expect(key.encode('org_1', q(query), at)).toBe(cursor)
      expect(key.decode('org_1', q(query), cursor)).toEqual(at)
    })
  }
})
