import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { createContext, planFor, registerContractSuite } from './suite.ts'
import type { SuiteContext } from './check.ts'
import { NEEDS, type SuiteOptions } from './options.ts'

/**
 * The whole contract suite, every optional check included, against a server whose operator
 * raised the limit (RATE_LIMIT_PER_MINUTE=120): the suite holds the server to the limit it
 * advertises in X-RateLimit-Limit, not to the contract's default of 60. In-process on a manual
 * clock, as test/contract/conformance.test.ts runs it at the default.
 */

const LIMIT = 120
let server: TestServer
let context: SuiteContext | undefined
const options: SuiteOptions = { baseUrl: '', tokens: { main: '' }, exhaust: true, demoOk: true }

beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: LIMIT })
  const paid = server.seeded()
  const demo = server.seeded({ plan: 'demo' })
  const revoked = server.token(paid.org.id, 'revoked')
  server.app.store.revokeToken(revoked.id, new Date(server.clock.now()).toISOString())
  const disabled = server.organisation({ apiEnabled: false })
  Object.assign(options, { baseUrl: server.base, tokens: { main: paid.token, demo: demo.token, disabled: disabled.token, revoked: revoked.token } })
  context = createContext(options, { now: () => server.clock.now(), sleep: async (ms: number) => server.clock.advance(ms) }, () => undefined)
})
afterAll(() => server.close())

registerContractSuite(() => context!, new Set(NEEDS))

test('the run learned the configured limit, spent a whole window of it, and stayed within its budget', () => {
  expect(context!.client.minuteLimit).toBe(LIMIT)
  const spent = context!.client.spent
  expect(spent.main).toBeGreaterThan(LIMIT)
  const plan = planFor(options, LIMIT)
  for (const role of Object.keys(plan) as (keyof typeof plan)[]) expect({ role, spent: spent[role] <= plan[role] }).toEqual({ role, spent: true })
})
