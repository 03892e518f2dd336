import type { BigTenant, SmallTenants } from './data.ts'
import type { BaselineHandle, ServerHandle } from './processes.ts'
import type { Settings } from './options.ts'
import type { Report } from './report.ts'

/**
 * What a scenario needs prepared before it runs. The runner prepares the union of what the
 * selected scenarios declare, and nothing else; a scenario that reaches for something it did
 * not declare fails at once (see run.ts).
 */
export type Need =
  /** The 1M-ticket tenant and its 20,000 tokens (built once into bench/.data). */
  | 'big-tenant'
  /** 2,000 small tenants with a token each (built once into bench/.data). */
  | 'small-tenants'
  /** The service under test with the benchmark's settings, one process shared by the run's scenarios. */
  | 'server'
  /** A framework-free baseline server on the big tenant, started for this scenario alone. */
  | 'baseline'
  /** The sqlite3 CLI on the PATH (Debian: apt-get install sqlite3). */
  | 'sqlite3'
  /** curl on the PATH. */
  | 'curl'

/** What a scenario gets: its prepared needs, the run's settings, and the report to record figures in. */
export interface Bench {
  readonly settings: Settings
  readonly report: Report
  readonly log: (line: string) => void
  readonly big: BigTenant
  readonly small: SmallTenants
  readonly server: ServerHandle
  readonly baseline: BaselineHandle
  /** Another process of the service on the big tenant's data (limits raised as for `server`), plus `env`. */
  startService(env: Record<string, string>, name: string, script?: string): Promise<ServerHandle>
}

export interface Scenario {
  /** The name --only takes. */
  name: string
  /** One line for --help. */
  title: string
  needs: readonly Need[]
  /** A diagnostic: left out of the full run, run only when named with --only. */
  onlyWhenNamed?: boolean
  run(bench: Bench): Promise<void>
}
