import { describe, expect, test } from 'bun:test'
import { containsTokenShape, redactTokens } from '../../src/auth/token-shape.ts'
import { generateToken } from '../../src/auth/token.ts'
import { memoryLogger } from '../../src/logger.ts'

const token = generateToken()
const secret = token.slice(4)
/** Every character of `text` percent-escaped. */
const escapeAll = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')

describe('token-shaped text', () => {
  test('found as sent, in any case, percent-escaped (even twice), truncated; not in plain text', () => {
    for (const text of [token, `/v1/${token}`, token.toUpperCase(), `x=${escapeAll(token)}`, `x=svc%5F${secret}`, `x=svc%255F${secret}`, `x=%2573vc_${secret}`, 'svc_abc']) {
      expect({ text, found: containsTokenShape(text) }).toEqual({ text, found: true })
      expect(redactTokens(text)).not.toContain(secret.slice(0, 3))
    }
    for (const text of ['/v1/queues', 'from=2026-03-01&to=2026-03-02', 'svc_', 'service_x', '%E2%82%AC', '%zz', 'loader-run-42']) {
      expect({ text, found: containsTokenShape(text) }).toEqual({ text, found: false })
      expect(redactTokens(text)).toBe(text)
    }
  })

  test('the secret part is found without its prefix: after svc-, svc__, glued to svc, bare, escaped; a 38-character run that is no secret is not', () => {
    for (const [text, redacted] of <[string, string][]>[
      [`svc-${secret}`, 'svc-[redacted]'],
      [`svc__${secret}`, 'svc__[redacted]'],
      [`SVC${secret}`, 'SVC[redacted]'],
      [secret, '[redacted]'],
      [`id=${escapeAll(secret)}&x=1`, 'id=[redacted]&x=1'],
      [`${secret}.${secret}`, '[redacted].[redacted]'],
    ]) {
      expect({ text, found: containsTokenShape(text) }).toEqual({ text, found: true })
      expect(redactTokens(text)).toBe(redacted)
    }
    const other = generateToken().slice(4)
    // The same characters with the checksum off by one: no secret of ours.
    const near = secret.slice(0, 37) + (secret.endsWith('a') ? 'b' : 'a')
    for (const text of [near, 'a'.repeat(38), '0123456789abcdef'.repeat(4), `${other.slice(0, 20)}-${other.slice(20)}`]) {
      expect({ text, found: containsTokenShape(text) }).toEqual({ text, found: false })
      expect(redactTokens(text)).toBe(text)
    }
  })

  test('each token-shaped run becomes svc_[redacted]; the text around it stays', () => {
    expect(redactTokens(`a=${token}&b=svc%5F${secret}&c=1`)).toBe('a=svc_[redacted]&b=svc_[redacted]&c=1')
    expect(redactTokens(`/v1/queues/${token}`)).toBe('/v1/queues/svc_[redacted]')
  })
})

describe('the logger', () => {
  test('redacts a token in any field, nested ones included, percent-escaped or not', () => {
    const logger = memoryLogger('debug')
    logger.error('unhandled_error', { requestId: 'r1', error: { message: `bad request to /v1/${token}`, stack: `at ${escapeAll(token)}` }, list: [`svc%5F${secret}`] })
    logger.info('request', { path: '/v1/queues', query: 'from=2026-03-01', status: 200 })
    const [first, second] = logger.lines.map((line) => JSON.parse(line))
    expect(logger.lines.join('')).not.toContain(secret.slice(0, 8))
    expect(first.error.message).toBe('bad request to /v1/svc_[redacted]')
    expect(first.list).toEqual(['svc_[redacted]'])
    expect(second).toMatchObject({ path: '/v1/queues', query: 'from=2026-03-01' })
  })

  test('redacts a secret part logged without its prefix', () => {
    const logger = memoryLogger('debug')
    logger.info('request', { requestId: 'r1', path: `/v1/svc-${secret}`, note: secret })
    logger.info('request', { requestId: 'r2', query: `t=svc__${secret}` })
    expect(logger.lines.join('')).not.toContain(secret.slice(0, 8))
    expect(JSON.parse(logger.lines[0]!)).toMatchObject({ path: '/v1/svc-[redacted]', note: '[redacted]' })
    expect(JSON.parse(logger.lines[1]!)).toMatchObject({ query: 't=svc__[redacted]' })
  })
})
