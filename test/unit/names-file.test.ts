import { describe, expect, test } from 'bun:test'
import { namesAndLocalTimes, namesFileName } from '../../src/web/names-file.ts'
import { LocalClock } from '../../src/web/zone.ts'

/** The file with names and local times, made from export bytes split anywhere. */
async function transform(csv: string, chunkSize: number): Promise<string> {
  const bytes = new TextEncoder().encode(csv)
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += chunkSize) controller.enqueue(bytes.slice(i, i + chunkSize))
      controller.close()
    },
  })
  const names = { locations: new Map([['loc_a', 'Amsterdam, Centraal']]), queues: new Map([['q_pay', '=SUM(1)']]) }
  const out = await new Response(source.pipeThrough(namesAndLocalTimes(names, new LocalClock('America/New_York')))).arrayBuffer()
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(out)
}

describe('the file with names and local times', () => {
  test('names and local times added; a quoted record and a field that would start a formula rewritten; unknown ids and times left empty', async () => {
    const csv = [
      'id,queueId,locationId,createdAt,calledAt,note\r\n',
      't1,q_pay,loc_a,2026-03-08T06:59:59.000Z,2026-03-08T07:00:00.000Z,plain\r\n', // 01:59:59 EST, then 03:00:00 EDT
      '-t2,q_other,loc_x,2026-03-08T12:00:00.000Z,,"with, comma"\r\n',
      't3,q_pay,loc_a,not-an-instant,,\r\n',
      't4,q_pay,loc_a,2026-03-08T12:00:00.000Z,,@note\r\n', // no quote, a field that starts a formula
    ].join('')
    const expected = [
      '\uFEFFid,queueId,locationId,createdAt,calledAt,note,locationName,queueName,createdAtLocal,calledAtLocal\r\n',
      't1,q_pay,loc_a,2026-03-08T06:59:59.000Z,2026-03-08T07:00:00.000Z,plain,"Amsterdam, Centraal",\'=SUM(1),2026-03-08 01:59:59,2026-03-08 03:00:00\r\n',
      "'-t2,q_other,loc_x,2026-03-08T12:00:00.000Z,,\"with, comma\",,,2026-03-08 08:00:00,\r\n",
      't3,q_pay,loc_a,not-an-instant,,,"Amsterdam, Centraal",\'=SUM(1),,\r\n',
      't4,q_pay,loc_a,2026-03-08T12:00:00.000Z,,\'@note,"Amsterdam, Centraal",\'=SUM(1),2026-03-08 08:00:00,\r\n',
    ].join('')
    for (const size of [1, 5, 64, 10_000]) expect(await transform(csv, size)).toBe(expected)
  })

  test("its name: the server's, with the zone", () => {
    expect(namesFileName('demo-tickets_20260301T000000Z_20260305T000000Z.csv', 'America/Argentina/Buenos_Aires')).toBe('demo-tickets_20260301T000000Z_20260305T000000Z_names_America-Argentina-Buenos_Aires.csv')
  })
})
