import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { standardTickets, type FixtureTicket } from '../support/fixtures.ts'
import { createContext, planFor, registerContractSuite } from '../conformance/suite.ts'
import type { SuiteContext } from '../conformance/check.ts'
import { NEEDS, type SuiteOptions } from '../conformance/options.ts'

/**
 * The contract suite's checks (test/conformance/) run in-process: the same checks that
 * `npm run -s contract` runs against a deployment, here against the app on a temp data
 * directory, every optional token given and the window spent too. The suite's waits move the
 * server's manual clock, so that the check that waits out Retry-After costs no real time. The
 * other files of this folder keep what a black-box run cannot see: fixture values, the files.
 */

/** The standard fixture and a few more rows: ties on createdAt, a field that needs CSV quoting. */
const TICKETS: FixtureTicket[] = [
  ...standardTickets(),
  { id: 'needs "quotes", and commas', number: 10, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: '2026-03-03T08:30:00.000Z', calledByDeviceSessionId: 'line\r\nbreak' },
  { id: 't-007', number: 4, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-03-03T09:00:00.000Z' },
  { id: 't-008', number: 5, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-03-03T09:00:00.000Z' },
]

let server: TestServer
let context: SuiteContext | undefined
const options: SuiteOptions = { baseUrl: '', tokens: { main: '' }, exhaust: true, demoOk: true }

beforeAll(async () => {
  server = await startServer()
  const paid = server.seeded({ tickets: TICKETS })
  const demo = server.seeded({ plan: 'demo', tickets: TICKETS })
  const revoked = server.token(paid.org.id, 'revoked')
  server.app.store.revokeToken(revoked.id, new Date(server.clock.now()).toISOString())
  const disabled = server.organisation({ apiEnabled: false })
  Object.assign(options, { baseUrl: server.base, tokens: { main: paid.token, demo: demo.token, disabled: disabled.token, revoked: revoked.token } })
  const clock = { now: () => server.clock.now(), sleep: async (ms: number) => server.clock.advance(ms) }
  context = createContext(options, clock, () => undefined)
})
afterAll(() => server.close())

registerContractSuite(() => context!, new Set(NEEDS))

test('the run stayed within the budget it would have printed', () => {
  const plan = planFor(options)
  for (const role of Object.keys(plan) as (keyof typeof plan)[]) expect({ role, spent: context!.client.spent[role] <= plan[role] }).toEqual({ role, spent: true })
})
