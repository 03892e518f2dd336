import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from './harness.ts'
import { CANARY } from './fixtures.ts'

/**
 * The security checks of an endpoint of /v1 that need what a black-box run cannot have (Unkey's
 * shared-suite practice): each endpoint's test file calls this with its own path. Missing,
 * malformed, unknown and revoked tokens, the scheme's case and the 402 are checked for every
 * operation by the contract suite (test/conformance/checks/security.ts), which
 * test/contract/conformance.test.ts runs in-process.
 */
export function securitySuite(path: string) {
  describe(`security of ${path.split('?')[0]}`, () => {
    let server: TestServer
    let token: string
    let otherToken: string

    beforeAll(async () => {
      server = await startServer()
      token = server.seeded().token
      otherToken = server.organisation().token // an organisation with no data at all
    })
    afterAll(() => server.close())

    test('token in the query string is not accepted', async () => {
      const sep = path.includes('?') ? '&' : '?'
      const response = await server.get(`${path}${sep}access_token=${token}`)
      expect(response.status).toBe(401)
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
