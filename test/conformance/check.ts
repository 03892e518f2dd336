import type { ContractClient } from './client.ts'
import type { Need, Role, SuiteOptions } from './options.ts'
import type { SuiteClock } from './pacer.ts'
import type { Sample } from './sample.ts'

/** What every check is given: the options, the one client, the clock, the discovered range. */
export interface SuiteContext {
  options: SuiteOptions
  client: ContractClient
  clock: SuiteClock
  /** Tells the person running the suite what it is doing (waits); silent in-process. */
  say(line: string): void
  /** The range discovered from the data by the first check; throws when discovery failed. */
  sample(): Sample
  setSample(sample: Sample): void
}

/**
 * One check of the contract, the same for both runners. `cost` is the most requests it makes
 * per role: the plan printed before a run is the sum over the checks that will run, and the
 * client fails a check that tries to make more.
 */
export interface Check {
  name: string
  cost: Partial<Record<Role, number>>
  /**
   * A role whose whole minute window the check spends on top of `cost`: the limit the server
   * advertises (X-RateLimit-Limit) once the run has learned it, the contract's 60 in the plan
   * printed before the first request.
   */
  spendsWindow?: Role
  /** Optional variables it needs; without them it is skipped under a name that lists them. */
  needs?: Need[]
  run(context: SuiteContext): Promise<void>
}

export interface CheckGroup {
  title: string
  checks: Check[]
}

/** How a need is written where a user reads it: the token's variable, or the flag with its value. */
export function needLabel(need: Need): string {
  return need === 'API_CONTRACT_EXHAUST' || need === 'API_CONTRACT_DEMO_OK' ? `${need}=1` : need
}

/** The test's name: a check that needs optional variables says which, run or skipped. */
export function checkTitle(check: Check): string {
  return check.needs?.length ? `${check.name} [needs ${check.needs.map(needLabel).join(', ')}]` : check.name
}
