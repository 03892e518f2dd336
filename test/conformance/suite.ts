import { describe, test } from 'bun:test'
import { checkTitle, needLabel, type Check, type CheckGroup, type SuiteContext } from './check.ts'
import { satisfied, type Need, type Role, type SuiteOptions } from './options.ts'
import { discovery, type Sample } from './sample.ts'
import { ContractClient } from './client.ts'
import { CONTRACT_PER_MINUTE, type SuiteClock } from './pacer.ts'
import { queueChecks } from './checks/queues.ts'
import { queryRuleChecks } from './checks/query-rules.ts'
import { paginationChecks } from './checks/pagination.ts'
import { exportChecks } from './checks/export.ts'
import { frameChecks } from './checks/frame.ts'
import { securityChecks } from './checks/security.ts'
import { rateLimitChecks } from './checks/rate-limit.ts'
import { DEMO_DAILY_QUOTA, demoChecks } from './checks/demo.ts'
import { exhaustChecks } from './checks/exhaust.ts'
import { auditChecks } from './checks/audit.ts'

/**
 * The black-box contract checks, in the order they run: discovery first (the data checks use
 * its range), the checks that spend the window after all others, the audit of every answer last.
 * Both runners register this one list: test/conformance/deployment.contract.ts against a URL,
 * test/contract/conformance.test.ts against the app built in-process.
 */
export const GROUPS: CheckGroup[] = [
  { title: 'discovery', checks: [discovery] },
  queueChecks,
  queryRuleChecks,
  paginationChecks,
  exportChecks,
  frameChecks,
  securityChecks,
  rateLimitChecks,
  demoChecks,
  exhaustChecks,
  auditChecks,
]

/** The context both runners give the checks: one client over `options`, on `clock`. */
export function createContext(options: SuiteOptions, clock: SuiteClock, say: (line: string) => void): SuiteContext {
  let sample: Sample | undefined
  return {
    options,
    client: new ContractClient(options, clock, say),
    clock,
    say,
    sample() {
      if (!sample) throw new Error('no range was discovered from the data (see the discovery check)')
      return sample
    },
    setSample(found) {
      sample = found
    },
  }
}

const runs = (check: Check, given: ReadonlySet<Need>) => (check.needs ?? []).every((need) => given.has(need))

/**
 * Registers every check with bun:test; those whose needs are not all `given` as skipped. The
 * context is asked for when a check runs, so that a runner may build it in a beforeAll.
 */
export function registerContractSuite(context: () => SuiteContext, given: ReadonlySet<Need>): void {
  for (const group of GROUPS) {
    describe(group.title, () => {
      for (const check of group.checks) {
        if (!runs(check, given)) {
          test.skip(checkTitle(check), () => undefined)
          continue
        }
        test(checkTitle(check), async () => {
          const ctx = context()
          ctx.client.beginCheck(check.name, costOf(check, ctx.client.minuteLimit ?? CONTRACT_PER_MINUTE))
          try {
            await check.run(ctx)
          } finally {
            ctx.client.endCheck()
          }
        })
      }
    })
  }
}

/** A check's budget per role, its window spent at `minuteLimit` requests. */
export function costOf(check: Check, minuteLimit: number): Partial<Record<Role, number>> {
  const cost = { ...check.cost }
  if (check.spendsWindow) cost[check.spendsWindow] = (cost[check.spendsWindow] ?? 0) + minuteLimit
  return cost
}

export type Plan = Record<Role, number>

/**
 * The most requests a run with these options makes, per role: the sum over the checks that run,
 * a window spent at `minuteLimit` (the contract's 60 before the server has said otherwise).
 */
export function planFor(options: SuiteOptions, minuteLimit = CONTRACT_PER_MINUTE): Plan {
  const given = satisfied(options)
  const plan: Plan = { main: 0, demo: 0, disabled: 0, revoked: 0, none: 0 }
  for (const check of GROUPS.flatMap((group) => group.checks)) {
    if (!runs(check, given)) continue
    for (const [role, count] of Object.entries(costOf(check, minuteLimit)) as [Role, number][]) plan[role] += count
  }
  return plan
}

/** What a run prints before its first request: the budget per token, and what is skipped and why. */
export function describePlan(options: SuiteOptions): string[] {
  const plan = planFor(options)
  const given = satisfied(options)
  const parts = [`API_TOKEN ${plan.main} (paced to stay inside its minute window, at most the contract's ${CONTRACT_PER_MINUTE} a minute)`]
  if (plan.demo) parts.push(`API_DEMO_TOKEN ${plan.demo} (${plan.demo} of the demo organisation's ${DEMO_DAILY_QUOTA} a day)`)
  if (plan.disabled) parts.push(`API_DISABLED_TOKEN ${plan.disabled}`)
  if (plan.revoked) parts.push(`API_REVOKED_TOKEN ${plan.revoked}`)
  parts.push(`without a valid token ${plan.none}`)
  const lines = [`contract: checking ${options.baseUrl}; requests at most, per token: ${parts.join(', ')}. It never writes data.`]
  if (options.tokens.demo && !options.demoOk) {
    const wouldSpend = planFor({ ...options, demoOk: true }).demo
    lines.push(`contract: the demo checks would spend ${wouldSpend} of the demo organisation's ${DEMO_DAILY_QUOTA} requests today; set API_CONTRACT_DEMO_OK=1 to allow them (skipped now).`)
  }
  if (options.exhaust) {
    lines.push(`contract: API_CONTRACT_EXHAUST=1: after the other checks it spends API_TOKEN's whole minute window (counted above as the contract's ${CONTRACT_PER_MINUTE}; as many as the server's X-RateLimit-Limit says), then waits up to a minute (Retry-After) until the window lets a request through again.`)
  }
  const missing = new Set(GROUPS.flatMap((group) => group.checks).flatMap((check) => (check.needs ?? []).filter((need) => !given.has(need))))
  if (missing.size > 0) lines.push(`contract: skipped for want of ${[...missing].map(needLabel).join(', ')} (each skipped check's name says which).`)
  return lines
}

/** The full name bun reports for the one check whose name starts with `prefix`: "group > check". */
export function reportedName(prefix: string): string {
  const found = GROUPS.flatMap((group) => group.checks.filter((check) => check.name.startsWith(prefix)).map((check) => `${group.title} > ${checkTitle(check)}`))
  if (found.length !== 1) throw new Error(`${found.length} checks are named "${prefix}…"`)
  return found[0]!
}
