import { expect } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { TICKET_FIELDS } from '../../../src/contract/vocabulary.ts'
import { compact, expectStatus, expectedCsv } from '../assertions.ts'
import type { CheckGroup, SuiteContext } from '../check.ts'
import { FILTER_CASES, filterCases, rangeQuery } from './pagination.ts'

const BOM = [0xef, 0xbb, 0xbf]

/** The export of the discovered range (`extra`: filters), uncompressed unless `headers` ask otherwise. */
async function exportSample(context: SuiteContext, extra: [string, string][] = [], headers?: Record<string, string>) {
  const exchange = await context.client.get(`/v1/exports/tickets.csv?${rangeQuery(context.sample(), extra)}`, 'main', headers)
  expectStatus(exchange, 200)
  return exchange
}

export const exportChecks: CheckGroup = {
  title: 'GET /v1/exports/tickets.csv',
  checks: [
    {
      name: 'text/csv; charset=utf-8, an attachment named after the range, streamed chunked; no demo markings for a paid organisation',
      cost: { main: 1 },
      async run(context) {
        const { from, to } = context.sample()
        const exchange = await exportSample(context)
        expect(exchange.headers.get('content-type')).toBe('text/csv; charset=utf-8')
        expect(exchange.headers.get('content-disposition')).toBe(`attachment; filename="tickets_${compact(from)}_${compact(to)}.csv"`)
        expect({ transferEncoding: exchange.headers.get('transfer-encoding'), contentLength: exchange.headers.get('content-length') }).toEqual({ transferEncoding: 'chunked', contentLength: null })
        expect(exchange.headers.get('x-service-demo')).toBeNull()
      },
    },
    {
      name: "no byte-order mark; the first line is exactly the contract's header row",
      cost: { main: 1 },
      async run(context) {
        const exchange = await exportSample(context)
        expect([...exchange.bytes.slice(0, 3)]).not.toEqual(BOM)
        expect(exchange.text.slice(0, exchange.text.indexOf('\r\n'))).toBe(TICKET_FIELDS.join(','))
      },
    },
    {
      name: 'RFC 4180, byte for byte: the rows of the JSON pages of the same range (CRLF, quoting only where needed, null empty)',
      cost: { main: 1 },
      async run(context) {
        const exchange = await exportSample(context)
        expect(exchange.text).toBe(expectedCsv(context.sample().rows, false))
      },
    },
    {
      name: 'filtered exports hold exactly the rows the same filters select in pages',
      cost: { main: FILTER_CASES },
      async run(context) {
        const sample = context.sample()
        for (const { label, pairs, keep } of filterCases(sample)) {
          const exchange = await exportSample(context, pairs)
          expect({ filter: label, csv: exchange.text }).toEqual({ filter: label, csv: expectedCsv(sample.rows.filter(keep), false) })
        }
      },
    },
    {
      name: 'gzip when the client accepts it: Content-Encoding gzip, the same CSV inside',
      cost: { main: 1 },
      async run(context) {
        const exchange = await exportSample(context, [], { 'Accept-Encoding': 'gzip' })
        expect(exchange.headers.get('content-encoding')).toBe('gzip')
        expect(gunzipSync(exchange.bytes).toString('utf8')).toBe(expectedCsv(context.sample().rows, false))
      },
    },
    {
      name: 'a range without tickets: the header row alone, streamed chunked',
      cost: { main: 1 },
      async run({ client }) {
        // Assumed empty in any deployment: no ticket was created on the first day of 1970.
        const exchange = await client.get('/v1/exports/tickets.csv?from=1970-01-01&to=1970-01-02')
        expectStatus(exchange, 200)
        expect(exchange.text).toBe(`${TICKET_FIELDS.join(',')}\r\n`)
        expect(exchange.headers.get('transfer-encoding')).toBe('chunked')
      },
    },
  ],
}
