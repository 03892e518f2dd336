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
  /**
   * Debian's redis-server on the PATH (apt-get install redis-server). The scenario starts its own
   * on a free port in a private temp directory and stops it after (startRedis in processes.ts).
   */
  | 'redis-server'
  /** Debian's Chromium (apt-get install chromium), driven by playwright-core. */
  | 'chromium'

/** The needs that are programs on the PATH, and how to name each when it is missing. */
export const TOOLS = {
  sqlite3: 'the sqlite3 CLI (Debian: apt-get install sqlite3)',
  curl: 'curl',
  'redis-server': 'redis-server (Debian: apt-get install redis-server)',
  chromium: 'Chromium (Debian: apt-get install chromium)',
} as const satisfies Partial<Record<Need, string>>

/**
 * The one line that stops a run (exit 2) whose scenarios need a program `which` does not find,
 * naming the scenarios that need it; null when nothing is missing.
 */
export function missingTool(selected: readonly Pick<Scenario, 'name' | 'needs'>[], which: (program: string) => string | null = Bun.which): string | null {
  for (const [tool, what] of Object.entries(TOOLS)) {
    const users = selected.filter((scenario) => scenario.needs.includes(tool as Need)).map((scenario) => scenario.name)
    if (users.length > 0 && !which(tool)) return `bench: ${users.join(', ')} needs ${what} on the PATH`
  }
  return null
}

/** What a scenario gets: its prepared needs, the run's settings, and the report to record figures in. */
export interface Bench {
  readonly settings: Settings
  readonly report: Report
  readonly log: (line: string) => void
  readonly big: BigTenant
  readonly small: SmallTenants
  readonly server: ServerHandle
  readonly baseline: BaselineHandle
  /**
   * Another process of the service on the benchmark's data (limits raised as for `server`), plus
   * `env`, which may also set DATA_DIR to serve another directory.
   */
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
