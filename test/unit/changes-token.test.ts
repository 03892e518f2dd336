import { describe, expect, test } from 'bun:test'
import { ChangesTokenCodec } from '../../src/changes/token.ts'
import { CursorCodec } from '../../src/tickets/cursor.ts'
import { parseTicketQuery } from '../../src/tickets/query.ts'
import { expectInvalidParam } from '../support/api-error.ts'

const codec = new ChangesTokenCodec('test-signing-key')
const position = { historyId: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', version: 1234 }

const expectTokenError = (fn: () => unknown, fragment: RegExp) => expectInvalidParam(fn, 'changedAfter', fragment)

describe('ChangesTokenCodec', () => {
  test('round trip; opaque base64url, URL-safe as it is', () => {
    const token = codec.encode('org_1', position)
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(codec.decode('org_1', token)).toEqual(position)
    expect(codec.decode('org_1', codec.encode('org_1', { ...position, version: 0 }))).toEqual({ ...position, version: 0 })
  })

  test('malformed: not two base64url parts, too long, or a signed payload of another shape', () => {
    for (const garbage of ['abc', 'a.b.c', '.abc', 'abc.', 'a b.c', '%%%.x', `${'x'.repeat(600)}.y`]) {
      expectTokenError(() => codec.decode('org_1', garbage), /is not a changes token.*X-Changes-Token/)
    }
    for (const version of [-1, 1.5]) expectTokenError(() => codec.decode('org_1', codec.encode('org_1', { ...position, version })), /is not a changes token/)
  })

  test('altered: a payload or signature changed, another key, or a cursor passed as a token', () => {
    const [payload, signature] = codec.encode('org_1', position).split('.') as [string, string]
    const later = codec.encode('org_1', { ...position, version: 999_999 }).split('.')[0]
    expectTokenError(() => codec.decode('org_1', `${later}.${signature}`), /signature.*unchanged.*without changedAfter/)
    expectTokenError(() => codec.decode('org_1', `${payload}.${signature.slice(1)}A`), /signature/)
    expectTokenError(() => codec.decode('org_1', new ChangesTokenCodec('another-key').encode('org_1', position)), /signature/)
    const query = parseTicketQuery(new URLSearchParams('from=2026-03-01&to=2026-03-02'), 'page')
    const cursor = new CursorCodec('test-signing-key').encode('org_1', query, { createdAt: '2026-03-01T00:00:00.000Z', id: 'x' })
    expectTokenError(() => codec.decode('org_1', cursor), /signature/)
  })

  test("another organisation's genuine token has its own answer", () => {
    expectTokenError(() => codec.decode('org_2', codec.encode('org_1', position)), /another organisation.*without changedAfter/)
  })
})
