import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDeployment, type Deployment } from './support/deployment.ts'
import { FAULTS, startFaultyProxy, type FaultName } from './support/faulty-proxy.ts'
import { runContractSuite } from './support/run-suite.ts'
import { GROUPS, reportedName } from './suite.ts'

/**
 * The contract suite run as a user runs it (`npm run -s contract`, bun's JUnit report) against the
 * project's own server in a process of its own: it passes; then against proxies that break the
 * contract in one way each, and it names the fault.
 */

/** What each fault must make fail, at least. */
const REPORTED: Record<FaultName, string[]> = {
  'drops X-RateLimit-Remaining': [
    reportedName('rate-limit headers on every answer to a known token'),
    reportedName('X-RateLimit-Remaining falls by exactly one'),
  ],
  'answers limit=501 with 200': [reportedName('limit above 500 (501)')],
  'reorders two rows of a page': [reportedName('rows are ordered by createdAt then id'), reportedName('walking the cursors')],
  'adds a BOM to the CSV': [reportedName('no byte-order mark'), reportedName('RFC 4180, byte for byte')],
  'sends a 500 body with a stack trace': [reportedName('no error answer says anything internal'), reportedName('an unknown parameter')],
}
const FAULT_NAMES = Object.keys(FAULTS) as FaultName[]
/** Every check of the suite: one test case each in a complete report. */
const CHECKS = GROUPS.flatMap((group) => group.checks)
/** One token of the paid organisation per run: direct, without options, through a faithful proxy, each fault. */
const RUNS = 3 + FAULT_NAMES.length

let deployment: Deployment
let reports: string
let run = 0

/** The variables of a run with every optional token, through `base`, on a token of its own. */
function everything(base: string): Record<string, string> {
  return {
    API_BASE_URL: base,
    API_TOKEN: deployment.mainTokens[run++]!.token,
    API_DEMO_TOKEN: deployment.demo.token,
    API_DISABLED_TOKEN: deployment.disabled.token,
    API_REVOKED_TOKEN: deployment.revoked.token,
    API_CONTRACT_DEMO_OK: '1',
  }
}

/**
 * Requests the server logged, by token id. The access log is written in batches, so a request
 * with a request id of its own goes last, and the count waits until its line is out: every line
 * before it is out too.
 */
async function requestsByToken(): Promise<Map<string, number>> {
  const barrier = `barrier-${crypto.randomUUID()}`
  await fetch(`${deployment.server.base}/v1/queues`, { headers: { 'x-request-id': barrier } })
  for (let tries = 0; !deployment.server.output().includes(barrier); tries++) {
    if (tries > 200) throw new Error('the access log never wrote the barrier request')
    await Bun.sleep(10)
  }
  const counts = new Map<string, number>()
  for (const line of deployment.server.output().split('\n').slice(0, -1)) {
    if (!line.includes('"event":"request"')) continue
    const { tokenId } = JSON.parse(line) as { tokenId: string | null }
    if (tokenId) counts.set(tokenId, (counts.get(tokenId) ?? 0) + 1)
  }
  return counts
}

/** The per-token numbers of the plan line the run printed first. */
function announced(stdout: string, variable: string): number {
  const match = new RegExp(`${variable} (\\d+)`).exec(stdout.split('\n')[0] ?? '')
  if (!match) throw new Error(`the plan names no budget for ${variable}: ${stdout}`)
  return Number(match[1])
}

beforeAll(async () => {
  reports = mkdtempSync(join(tmpdir(), 'qa-contract-reports-'))
  deployment = await startDeployment(RUNS)
}, 60_000)
afterAll(async () => {
  await deployment?.stop()
  if (reports) rmSync(reports, { recursive: true, force: true })
})

describe("the contract suite against the project's own server", () => {
  test('passes with every optional token; only the window-spending check is skipped, named; no token made more requests than announced', async () => {
    const env = everything(deployment.server.base)
    const before = await requestsByToken()
    const result = await runContractSuite(env, reports, 'clean')
    expect(result.failed).toEqual([])
    expect(result.status).toBe(0)
    expect(result.skipped).toEqual([reportedName('once the window is spent')])
    expect(result.skipped[0]).toContain('[needs API_CONTRACT_EXHAUST=1]')
    expect(result.cases).toHaveLength(CHECKS.length)
    const after = await requestsByToken()
    const spent = (id: string) => (after.get(id) ?? 0) - (before.get(id) ?? 0)
    const mainId = deployment.mainTokens.find((t) => t.token === env.API_TOKEN)!.id
    for (const [id, variable] of [[mainId, 'API_TOKEN'], [deployment.demo.id, 'API_DEMO_TOKEN'], [deployment.disabled.id, 'API_DISABLED_TOKEN']] as const) {
      expect({ variable, spent: spent(id) > 0 && spent(id) <= announced(result.stdout, variable) }).toEqual({ variable, spent: true })
    }
  })

  test("without the optional variables each check that needs one is skipped under a name that says which; a demo token is not spent without API_CONTRACT_DEMO_OK=1", async () => {
    const before = (await requestsByToken()).get(deployment.demo.id) ?? 0
    const result = await runContractSuite(
      { API_BASE_URL: deployment.server.base, API_TOKEN: deployment.mainTokens[run++]!.token, API_DEMO_TOKEN: deployment.demo.token },
      reports,
      'bare',
    )
    expect(result.failed).toEqual([])
    expect(result.status).toBe(0)
    const needing = CHECKS.filter((check) => check.needs?.length)
    expect(result.skipped).toHaveLength(needing.length)
    for (const name of result.skipped) expect(name).toMatch(/\[needs (API_\w+(=1)?(, )?)+\]$/)
    expect(result.stdout).toMatch(/would spend \d+ of the demo organisation's 50 requests today; set API_CONTRACT_DEMO_OK=1/)
    expect((await requestsByToken()).get(deployment.demo.id) ?? 0).toBe(before)
  })

  test('a missing API_BASE_URL or API_TOKEN: one line on stderr, exit 2', async () => {
    for (const env of [{ API_TOKEN: 'svc_x' }, { API_BASE_URL: deployment.server.base }] as Record<string, string>[]) {
      const result = await runContractSuite(env, reports, 'missing')
      expect(result.status).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('set API_BASE_URL and API_TOKEN')])
    }
  })
})

describe('the contract suite against deliberately wrong servers', () => {
  test('a proxy that changes nothing: the suite passes, so that what fails below is the fault', async () => {
    const proxy = startFaultyProxy(deployment.server.base, {})
    try {
      const result = await runContractSuite(everything(`http://127.0.0.1:${proxy.port}`), reports, 'faithful')
      expect(result.failed).toEqual([])
      expect(result.status).toBe(0)
      expect(result.cases).toHaveLength(CHECKS.length)
    } finally {
      await proxy.stop(true)
    }
  })

  for (const fault of FAULT_NAMES) {
    test(`a proxy that ${fault}: the suite fails and names it`, async () => {
      const proxy = startFaultyProxy(deployment.server.base, FAULTS[fault])
      try {
        const result = await runContractSuite(everything(`http://127.0.0.1:${proxy.port}`), reports, fault.replace(/\W+/g, '-'))
        expect(result.status).toBe(1)
        expect(result.failed).toEqual(expect.arrayContaining(REPORTED[fault]))
      } finally {
        await proxy.stop(true)
      }
    })
  }
})
