import { describe, expect, test } from 'bun:test'
import { ERROR_CODES, ERROR_STATUS, TICKET_FIELDS, TICKET_STATUSES } from '../../src/contract/vocabulary.ts'
import { ErrorCodeSchema, TicketSchema, TicketStatusSchema } from '../../src/contract/schemas.ts'
import { csvHeader } from '../../src/export/csv-format.ts'

describe('src/contract: one source for the shapes', () => {
  test('the ticket schema has exactly the contract fields, in their order', () => {
    expect(Object.keys(TicketSchema.properties)).toEqual([...TICKET_FIELDS])
  })

  test('the CSV header row is the field list, demo column last', () => {
    expect(csvHeader(false)).toBe('id,number,queueId,locationId,status,createdAt,calledAt,completedAt,cancelledAt,skippedAt,noShowAt,calledByDeviceSessionId\r\n')
    expect(csvHeader(true)).toBe(`${TICKET_FIELDS.join(',')},demo\r\n`)
  })

  test('the status and error-code schemas are the unions of the vocabulary', () => {
    expect(TicketStatusSchema.anyOf.map((s) => s.const)).toEqual([...TICKET_STATUSES])
    expect(ErrorCodeSchema.anyOf.map((s) => s.const)).toEqual(ERROR_CODES)
    expect(ERROR_STATUS.limits_unavailable).toBe(503)
  })
})
