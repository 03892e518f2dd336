import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateToken } from '../../src/auth/token.ts'
import { startServer, type TestServer } from './harness.ts'
import { CANARY } from './fixtures.ts'

async function expectUnauthorized(response: Response, tokenGiven: boolean) {
  expect(response.status).toBe(401)
  const body = (await response.json()) as Record<string, unknown>
  expect(body.error).toBe('unauthorized')
  expect(typeof body.message).toBe('string')
  expect(body.requestId).toBe(response.headers.get('x-request-id')!)
  const challenge = response.headers.get('www-authenticate')!
  expect(challenge).toStartWith('Bearer')
  expect(challenge.includes('error="invalid_token"')).toBe(tokenGiven)
  // 401 counts nowhere, so it shows no rate-limit state.
  expect(response.headers.get('x-ratelimit-remaining')).toBeNull()
}

/**
 * The security checks every endpoint of /v1 must pass (Unkey's shared-suite practice): each
 * endpoint's test file calls this with its own path.
 */
export function securitySuite(path: string) {
  describe(`security of ${path.split('?')[0]}`, () => {
    let server: TestServer
    let token: string
    let otherToken: string
    let revokedToken: string
    let disabledToken: string

    beforeAll(async () => {
      server = await startServer()
      const mine = server.seeded()
      token = mine.token
      otherToken = server.organisation().token // an organisation with no data at all
      const revoked = server.token(mine.org.id, 'revoked')
      server.app.store.revokeToken(revoked.id, new Date(server.clock.now()).toISOString())
      revokedToken = revoked.token
      disabledToken = server.organisation({ apiEnabled: false }).token
    })
    afterAll(() => server.close())

    test('no Authorization header: 401', async () => {
      await expectUnauthorized(await server.get(path), false)
    })
    test('another scheme: 401', async () => {
      await expectUnauthorized(await server.get(path, null, { Authorization: `Basic ${btoa('user:pass')}` }), false)
    })
    test('token in the query string is not accepted', async () => {
      const sep = path.includes('?') ? '&' : '?'
      const response = await server.get(`${path}${sep}access_token=${token}`)
      expect(response.status).toBe(401)
    })
    test('wrong prefix: 401', async () => {
      await expectUnauthorized(await server.get(path, token.replace('svc_', 'sk_x')), true)
    })
    test('bad checksum: 401', async () => {
      const last = token.at(-1) === 'A' ? 'B' : 'A'
      await expectUnauthorized(await server.get(path, token.slice(0, -1) + last), true)
    })
    test('well-formed but unknown token: 401', async () => {
      await expectUnauthorized(await server.get(path, generateToken()), true)
    })
    test('revoked token: 401', async () => {
      await expectUnauthorized(await server.get(path, revokedToken), true)
    })
    test('scheme is case-insensitive', async () => {
      const response = await server.get(path, null, { Authorization: `bEaReR ${token}` })
      expect(response.status).toBe(200)
      await response.arrayBuffer()
    })
    test('organisation without the API feature: 402 with the window shown, nothing counted', async () => {
      const first = await server.get(path, disabledToken)
      const second = await server.get(path, disabledToken)
      for (const response of [first, second]) {
        expect(response.status).toBe(402)
        const body = (await response.json()) as Record<string, unknown>
        expect(body.error).toBe('api_not_enabled')
        expect(response.headers.get('x-ratelimit-remaining')).toBe('60')
      }
    })
    test("another organisation's token sees only its own data", async () => {
      const own = await (await server.get(path, token)).text()
      const other = await (await server.get(path, otherToken)).text()
      expect(own).toContain(path.includes('queues') ? 'loc_a' : 't-001')
      expect(other).not.toContain('loc_a')
      expect(other).not.toContain('t-001')
    })
    test('no personal value or bearer hash in the answer', async () => {
      const body = await (await server.get(path, token)).text()
      for (const value of Object.values(CANARY)) expect(body).not.toContain(String(value))
    })
  })
}
