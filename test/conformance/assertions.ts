import { expect } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { FormatRegistry, type TSchema } from '@sinclair/typebox'
import { ERROR_STATUS, TICKET_FIELDS } from '../../src/contract/vocabulary.ts'
import type { Ticket } from '../../src/contract/schemas.ts'
import type { Exchange } from './client.ts'

/** Shared assertions of the contract checks; each failure names the request it is about. */

/** The one form of every timestamp the API serves: UTC, milliseconds, 24 characters. */
const CANONICAL_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const isCanonicalInstant = (value: string) => CANONICAL_INSTANT.test(value) && new Date(value).toISOString() === value

// The schemas of src/contract mark timestamps `format: 'date-time'`. TypeBox checks a format only
// when one is registered, and nothing of the service registers one: the served form is canonical.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isCanonicalInstant)

const TIMESTAMP_FIELDS = ['createdAt', 'calledAt', 'completedAt', 'cancelledAt', 'skippedAt', 'noShowAt'] as const

/** Every timestamp of every row in the canonical form (null where a step was not reached). */
export function expectCanonicalTimestamps(rows: readonly Ticket[]): void {
  for (const row of rows) {
    const odd = TIMESTAMP_FIELDS.filter((field) => row[field] !== null && !isCanonicalInstant(row[field]!))
    expect({ ticket: row.id, notCanonical: odd }).toEqual({ ticket: row.id, notCanonical: [] })
  }
}

export function expectStatus(exchange: Exchange, status: number): void {
  const got = { request: `${exchange.method} ${exchange.path}`, status: exchange.status }
  const want = { request: got.request, status }
  if (got.status !== status) Object.assign(got, { body: exchange.text.slice(0, 300) })
  expect(got).toEqual(want)
}

/** The body matches a TypeBox schema of src/contract; the failure lists what does not. */
export function expectSchema(schema: TSchema, value: unknown, what: string): void {
  const errors = [...Value.Errors(schema, value)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`)
  expect({ what, errors }).toEqual({ what, errors: [] })
}

/**
 * An error answer in the one body shape (JSON with `error`, a sentence in `message`,
 * `requestId` equal to X-Request-Id), with `code`'s status, and `param` when one is named.
 */
export function expectError(exchange: Exchange, code: keyof typeof ERROR_STATUS, param?: string): Record<string, unknown> {
  expectStatus(exchange, ERROR_STATUS[code])
  expect(exchange.headers.get('content-type')).toBe('application/json')
  const body = exchange.json()
  expect(body.error).toBe(code)
  expect(typeof body.message).toBe('string')
  expect((body.message as string).length).toBeGreaterThan(10)
  expect(body.requestId).toBe(exchange.headers.get('x-request-id')!)
  if (param !== undefined) expect(body.param).toBe(param)
  return body
}

/** Byte order of the UTF-8 forms: how SQLite's BINARY collation and a byte-wise sort compare text. */
export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

/** The first place where `rows` break the order (createdAt, then id), or null. */
export function firstDisorder(rows: readonly Pick<Ticket, 'id' | 'createdAt'>[]): string | null {
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1]!, rows[i]!]
    const order = compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id)
    if (order >= 0) return `row ${i - 1} (${a.createdAt} ${a.id}) is not before row ${i} (${b.createdAt} ${b.id})`
  }
  return null
}

export function expectOrdered(rows: readonly Pick<Ticket, 'id' | 'createdAt'>[], what: string): void {
  expect({ what, disorder: firstDisorder(rows) }).toEqual({ what, disorder: null })
}

/**
 * The CSV the contract requires for these rows, written from the RFC 4180 rules rather than by
 * the server's formatter: the header row, CRLF after every line, a field quoted only when it
 * holds a comma, a quote, CR or LF (quotes doubled), null as an empty field, no byte-order mark.
 */
export function expectedCsv(rows: readonly Ticket[], demo: boolean): string {
  const field = (value: unknown) => {
    const text = value === null ? '' : String(value)
    return /[",\r\n]/.test(text) ? `"${text.split('"').join('""')}"` : text
  }
  const header = [...TICKET_FIELDS, ...(demo ? ['demo'] : [])].join(',')
  const lines = rows.map((row) => [...TICKET_FIELDS.map((name) => field(row[name])), ...(demo ? ['1'] : [])].join(','))
  return [header, ...lines].map((line) => line + '\r\n').join('')
}

/** An instant in the canonical form the API serves (24 characters, UTC, milliseconds). */
export const iso = (ms: number) => new Date(ms).toISOString()

/** YYYYMMDDTHHMMSSZ, the form of the export's file name. */
export const compact = (instant: string) => instant.replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z')

/** A query string from pairs, each value encoded (repeatable names simply appear twice). */
export function query(pairs: [string, string][]): string {
  return pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
}
