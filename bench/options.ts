import { parseArgs } from 'node:util'

/**
 * The benchmark's command line, parsed strictly: a mistake stops the run at once with one line
 * (exit 2) instead of a run of minutes that measures something else, or nothing.
 */
export interface BenchOptions {
  quick: boolean
  /** The scenarios named with --only, in the order given; null runs the full set. */
  only: string[] | null
  /** --pairs N; null for the default. */
  pairs: number | null
  help: boolean
}

/** How long and how often a run measures, from the options. */
export interface Settings {
  quick: boolean
  /** Runs of each figure (exports: runs + 2). */
  runs: number
  /** Seconds of one load run. */
  loadSeconds: number
  /**
   * Pages are compared with the framework-free server in short back-to-back pairs, which side
   * goes first alternating: this machine's speed drifts by a third over minutes, and three long
   * runs of each could not separate that from a 10 % difference.
   */
  pairs: number
  pairSeconds: number
}

export class BenchUsageError extends Error {}

export const OPTIONS_HELP = '--quick, --only <name,name,…>, --pairs <N>, --help'

/** Parses the benchmark's arguments; throws BenchUsageError (one line) on anything it does not know. */
export function parseBenchOptions(argv: string[], scenarioNames: readonly string[]): BenchOptions {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: { quick: { type: 'boolean' }, only: { type: 'string', multiple: true }, pairs: { type: 'string' }, help: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    })
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]!
    throw new BenchUsageError(`${message[0]!.toLowerCase()}${message.slice(1)}; valid options: ${OPTIONS_HELP}`)
  }
  const { values } = parsed
  let only: string[] | null = null
  if (values.only) {
    only = values.only.flatMap((list) => list.split(',')).map((name) => name.trim()).filter((name) => name !== '')
    const unknown = only.filter((name) => !scenarioNames.includes(name))
    if (only.length === 0 || unknown.length > 0) {
      const what = unknown.length > 0 ? `unknown scenario ${unknown.map((name) => `"${name}"`).join(', ')}` : '--only needs scenario names'
      throw new BenchUsageError(`${what}; valid names: ${scenarioNames.join(', ')}`)
    }
  }
  let pairs: number | null = null
  if (values.pairs !== undefined) {
    if (!/^\d+$/.test(values.pairs) || Number(values.pairs) < 1) throw new BenchUsageError(`--pairs needs a whole number of at least 1, got "${values.pairs}"`)
    pairs = Number(values.pairs)
  }
  return { quick: !!values.quick, only, pairs, help: !!values.help }
}

export function settingsOf(options: BenchOptions): Settings {
  return {
    quick: options.quick,
    runs: options.quick ? 2 : 3,
    loadSeconds: options.quick ? 3 : 5,
    pairs: options.pairs ?? (options.quick ? 3 : 9),
    pairSeconds: 3,
  }
}

/** What the options need to know of a scenario. */
interface Named {
  name: string
  title: string
  needs: readonly string[]
  onlyWhenNamed?: boolean
}

/** The scenarios a run takes, in registry order: those named with --only, or every one but the diagnostics. */
export function selectScenarios<S extends Named>(scenarios: readonly S[], only: string[] | null): S[] {
  return scenarios.filter((scenario) => (only ? only.includes(scenario.name) : !scenario.onlyWhenNamed))
}

export function benchUsage(scenarios: readonly Named[]): string {
  const width = Math.max(...scenarios.map((scenario) => scenario.name.length))
  return [
    'usage: npm run -s bench -- [--quick] [--only <name>,<name>…] [--pairs <N>]',
    '  --quick        fewer, shorter runs (2 runs of 3 s instead of 3 of 5 s; 3 pairs instead of 9)',
    '  --only names   only these scenarios (comma-separated, or --only repeated), and only what they need',
    '  --pairs N      pages and redis: N back-to-back pairs of each comparison; process and changes: N rounds',
    'scenarios, in the order a run takes them (a full run leaves out those marked "only when named"):',
    ...scenarios.map(
      (scenario) => `  ${scenario.name.padEnd(width)}  ${scenario.title}${scenario.onlyWhenNamed ? ' (only when named)' : ''}; needs ${scenario.needs.join(', ')}`,
    ),
    'The table goes to stdout, progress to stderr.',
  ].join('\n')
}
