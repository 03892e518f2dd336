import { describe, expect, test } from 'bun:test'
import { ERROR_CODES, ERROR_STATUS, TICKET_FIELDS, TICKET_STATUSES } from '../../src/contract/vocabulary.ts'
import { ErrorCodeSchema, TicketSchema, TicketStatusSchema } from '../../src/contract/schemas.ts'
import { csvHeader } from '../../src/export/csv-format.ts'
import { AMBIGUOUS_ABBREVIATIONS, canonicalZoneName, checkZone, RENAMED_ZONES } from '../../src/contract/time-zone.ts'

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


describe('zone names: one spelling for the page and the API', () => {
  test('IANA names in their listed case; renamed zones by their current name', () => {
    expect(canonicalZoneName('Europe/Zurich')).toBe('Europe/Zurich')
    expect(canonicalZoneName(' europe/amsterdam ')).toBe('Europe/Amsterdam')
    expect(canonicalZoneName('Asia/Kolkata')).toBe('Asia/Kolkata')
    expect(canonicalZoneName('Asia/Calcutta')).toBe('Asia/Kolkata')
    expect(canonicalZoneName('asia/calcutta')).toBe('Asia/Kolkata')
    expect(canonicalZoneName('Europe/Kiev')).toBe('Europe/Kyiv')
    expect(canonicalZoneName('America/Buenos_Aires')).toBe('America/Argentina/Buenos_Aires')
    expect(canonicalZoneName('Etc/UTC')).toBe('UTC')
    expect(canonicalZoneName('UTC')).toBe('UTC')
    expect(canonicalZoneName('Etc/GMT+5')).toBe('Etc/GMT+5')
  })

  test('every renamed zone and every candidate is a zone this runtime knows, by its current name', () => {
    for (const zone of [...Object.values(RENAMED_ZONES), ...Object.values(AMBIGUOUS_ABBREVIATIONS).flat()]) expect({ zone, canonical: canonicalZoneName(zone) }).toEqual({ zone, canonical: zone })
    for (const old of Object.keys(RENAMED_ZONES)) expect({ old, known: canonicalZoneName(old) !== null }).toEqual({ old, known: true })
  })

  test('an ambiguous abbreviation is refused, naming the zones it may mean', () => {
    expect(checkZone('IST')).toEqual({
      zone: null,
      refusal: 'abbreviation',
      problem: "'IST' is an abbreviation, used by more than one place, not a time zone; name the place: Asia/Kolkata, Asia/Jerusalem, Europe/Dublin",
      candidates: ['Asia/Kolkata', 'Asia/Jerusalem', 'Europe/Dublin'],
    })
    expect(checkZone('cst')).toMatchObject({ zone: null, candidates: ['America/Chicago', 'Asia/Shanghai', 'America/Havana'] })
    expect(checkZone('EST')).toMatchObject({ zone: null, candidates: expect.arrayContaining(['America/New_York']) })
    expect(checkZone('JST')).toMatchObject({ zone: null, refusal: 'abbreviation', problem: "'JST' is an abbreviation, not a time zone; name the place: Asia/Tokyo" })
  })

  test('offsets, malformed and unknown names are refused with the reason', () => {
    for (const offset of ['+05:30', 'UTC+1', 'gmt-3', '−03:00']) expect(checkZone(offset)).toMatchObject({ zone: null, refusal: 'offset', problem: expect.stringContaining('is an offset, not a time zone') })
    expect(checkZone('')).toMatchObject({ zone: null, problem: 'no time zone given' })
    expect(checkZone('Europe/ Zurich')).toMatchObject({ zone: null, problem: expect.stringContaining('is not an IANA time zone name') })
    expect(checkZone('Europe/Atlantis')).toMatchObject({ zone: null, refusal: 'unknown', problem: expect.stringContaining('is not a time zone this runtime knows') })
    expect(checkZone('x'.repeat(200))).toMatchObject({ zone: null })
  })
})
