import { describe, expect, test } from 'bun:test'
import { seededServer } from '../support/harness.ts'
import { rawExchange } from '../support/raw-http.ts'

/**
 * Methods other than GET and HEAD (docs/api.md#limits-of-http-input). A method Bun's parser knows
 * reaches the pipeline: 405 with the JSON body and `Allow`. One it does not know is answered by
 * the parser before any code of ours runs, and these tests pin how, so that a Bun upgrade that
 * changes it is noticed: a name of valid characters outside Bun's list (`get`, `BREW`) gets the
 * connection closed with no answer (oven-sh/bun#6556); other characters a bare 400.
 */
const seeded = seededServer()

const exchange = (method: string) => rawExchange(seeded.server.base, `${method} /v1/queues HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${seeded.token}\r\nConnection: close\r\n\r\n`)

describe('a method other than GET and HEAD', () => {
  test('one Bun knows (DELETE, PROPFIND, QUERY, TRACE): 405 with the error body and Allow', async () => {
    for (const method of ['DELETE', 'PROPFIND', 'QUERY', 'TRACE', 'POST']) {
      const answer = await exchange(method)
      expect({ method, status: answer.status, allow: answer.headers.allow }).toEqual({ method, status: 405, allow: 'GET, HEAD' })
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'method_not_allowed' })
    }
  })

  test('one Bun does not know (get, Get, BREW): the connection closed with no answer, by Bun\'s parser', async () => {
    for (const method of ['get', 'Get', 'BREW']) {
      const answer = await exchange(method)
      expect({ method, raw: answer.raw }).toEqual({ method, raw: '' })
    }
  })

  test('one with characters no method may hold: Bun\'s bare 400, no body', async () => {
    const answer = await exchange('G@T')
    expect(answer.status).toBe(400)
    expect(answer.body).toBe('')
  })
})
