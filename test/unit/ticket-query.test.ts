import { describe, expect, test } from 'bun:test'
import { parseTicketQuery, type TicketEndpoint } from '../../src/tickets/query.ts'
import { parseInstant } from '../../src/contract/instant.ts'
import { expectInvalidParam } from '../support/api-error.ts'

const parse = (query: string, endpoint: TicketEndpoint = 'page') => parseTicketQuery(new URLSearchParams(query), endpoint)

/** Asserts a 400 naming `param`, whose message contains `fragment`. */
function expectInvalid(query: string, param: string, fragment: string | RegExp, endpoint: TicketEndpoint = 'page') {
  expectInvalidParam(() => parse(query, endpoint), param, fragment)
}

const ms = (iso: string) => Date.parse(iso)

describe('from / to instants (docs/api.md#from-and-to)', () => {
  const accepted: [string, string][] = [
    ['2026-03-01T00:00:00Z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T01:00:00.5+01:00', '2026-03-01T00:00:00.500Z'],
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01t10:00:00z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00:00-00:00', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00:00 02:00', '2026-03-01T08:00:00.000Z'], // '+' decoded to a space
    ['2026-03-01T10:00:00-05:30', '2026-03-01T15:30:00.000Z'],
    ['2026-03-01T10:00:00.0001Z', '2026-03-01T10:00:00.001Z'], // finer than ms: rounded up
    ['2026-03-01T10:00:00.1234567Z', '2026-03-01T10:00:00.124Z'],
    ['2026-03-01T10:00:00.999999Z', '2026-03-01T10:00:01.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
  ]
  for (const [raw, expected] of accepted) {
    test(`accepts ${raw}`, () => {
      expect(parseInstant(raw)).toEqual({ ok: true, ms: ms(expected) })
    })
  }

  const refused: [string, RegExp][] = [
    ['2026-03-01T10:00:00', /no UTC offset/],
    ['2026-03-01 10:00', /no UTC offset/],
    ['2026-02-30', /calendar date/],
    ['2026-13-01', /calendar date/],
    ['2025-02-29', /calendar date/],
    ['2026-03-01T23:59:60Z', /leap second/],
    ['2026-03-01T24:00:00Z', /time of day/],
    ['2026-03-01T10:60:00Z', /time of day/],
    ['2026-03-01T10:00:00+24:00', /offset/],
    ['2026-03-01T10:00:00+0100', /RFC 3339/],
    ['yesterday', /RFC 3339/],
    ['1709251200000', /RFC 3339/],
    ['2026-3-1', /RFC 3339/],
    ['+02026-03-01', /RFC 3339/],
  ]
  for (const [raw, reason] of refused) {
    test(`refuses ${raw}`, () => {
      const result = parseInstant(raw)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.reason).toMatch(reason)
    })
  }
})

describe('parseTicketQuery', () => {
  test('defaults and normalisation: sets sorted and deduplicated, limit 100', () => {
    const query = parse('from=2026-03-01&to=2026-03-02&queueId=b&queueId=a&queueId=b&status=WAITING')
    expect(query).toMatchObject({
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-02T00:00:00.000Z',
      filters: { queueId: ['a', 'b'], locationId: [], status: ['WAITING'] },
      limit: 100,
      cursor: null,
      changedAfter: null,
    })
  })

  test('changedAfter: kept raw for the token codec, on both operations; once, not empty', () => {
    expect(parse('from=2026-03-01&to=2026-03-02&changedAfter=abc.def').changedAfter).toBe('abc.def')
    expect(parse('from=2026-03-01&to=2026-03-02&changedAfter=abc.def', 'export').changedAfter).toBe('abc.def')
    expectInvalid('from=2026-03-01&to=2026-03-02&changedAfter=', 'changedAfter', /empty/)
    expectInvalid('from=2026-03-01&to=2026-03-02&changedAfter=a.b&changedAfter=a.b', 'changedAfter', /only once/, 'export')
  })

  test('a value is never split on commas, encoded or not', () => {
    expect(parse('from=2026-03-01&to=2026-03-02&queueId=a,b&queueId=c%2Cd').filters.queueId).toEqual(['a,b', 'c,d'])
  })

  test('from and to are required', () => {
    expectInvalid('to=2026-03-02', 'from', /required/)
    expectInvalid('from=2026-03-01', 'to', /required/)
  })
  test('invalid instants name their parameter', () => {
    expectInvalid('from=2026-03-01T10:00:00&to=2026-03-02', 'from', /offset/)
    expectInvalid('from=2026-03-01&to=2026-02-30', 'to', /calendar/)
  })
  test('from must be before to', () => {
    expectInvalid('from=2026-03-02&to=2026-03-02', 'to', /later than/)
    expectInvalid('from=2026-03-03&to=2026-03-02', 'to', /later than/)
  })
  test('exactly 90 days is allowed; a millisecond more is 400', () => {
    expect(parse('from=2026-01-01&to=2026-04-01').toMs - parse('from=2026-01-01&to=2026-04-01').fromMs).toBe(90 * 86_400_000)
    expectInvalid('from=2026-01-01T00:00:00Z&to=2026-04-01T00:00:00.001Z', 'to', /90 days/)
  })
  test('offsets are converted before the 90-day check', () => {
    expect(() => parse('from=2026-01-01T00:00:00%2B01:00&to=2026-03-31T23:00:00Z')).not.toThrow()
    expectInvalid('from=2026-01-01T00:00:00%2B01:00&to=2026-03-31T23:00:00.001Z', 'to', /90 days/)
  })
  test('status must be one of the six states', () => {
    for (const status of ['WAITING', 'CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW']) {
      expect(parse(`from=2026-03-01&to=2026-03-02&status=${status}`).filters.status).toEqual([status as never])
    }
    expectInvalid('from=2026-03-01&to=2026-03-02&status=CANCELLED', 'status', /one of WAITING/)
    expectInvalid('from=2026-03-01&to=2026-03-02&status=waiting', 'status', /one of/)
  })
  test('limit: digits 1..500', () => {
    expect(parse('from=2026-03-01&to=2026-03-02&limit=500').limit).toBe(500)
    expect(parse('from=2026-03-01&to=2026-03-02&limit=1').limit).toBe(1)
    expect(parse('from=2026-03-01&to=2026-03-02&limit=007').limit).toBe(7)
    for (const bad of ['0', '501', '-1', '1.5', '1e2', ' 5', '99999999999999999999', 'ten']) {
      expectInvalid(`from=2026-03-01&to=2026-03-02&limit=${encodeURIComponent(bad)}`, 'limit', /1 to 500/)
    }
  })
  test('unknown, empty and repeated single parameters are 400', () => {
    expectInvalid('from=2026-03-01&to=2026-03-02&queue=a', 'queue', /Unknown/)
    expectInvalid('from=2026-03-01&to=2026-03-02&queueId=', 'queueId', /empty/)
    expectInvalid('from=&to=2026-03-02', 'from', /empty/)
    expectInvalid('from=2026-03-01&to=2026-03-02&from=2026-03-01', 'from', /only once/)
    expectInvalid('from=2026-03-01&to=2026-03-02&limit=5&limit=6', 'limit', /only once/)
  })
  test('the export refuses cursor and limit', () => {
    expectInvalid('from=2026-03-01&to=2026-03-02&limit=5', 'limit', /not accepted by the CSV export/, 'export')
    expectInvalid('from=2026-03-01&to=2026-03-02&cursor=abc', 'cursor', /not accepted by the CSV export/, 'export')
    expect(parse('from=2026-03-01&to=2026-03-02&status=WAITING', 'export').filters.status).toEqual(['WAITING'])
  })
  test('a hostile parameter name is not echoed raw', () => {
    expectInvalid('from=2026-03-01&to=2026-03-02&%00evil%0A' + 'x'.repeat(200) + '=1', '\u0000evil\n' + 'x'.repeat(200), /Unknown query parameter '\?evil\?x+…'/)
  })
})
