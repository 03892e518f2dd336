/**
 * `npm run -s bench -- [--quick] [--only name,…] [--pairs N]`: the benchmark suite, a registry of
 * scenarios (bench/scenarios/, one file each, listed by `--help`). Each declares what it needs
 * (the 1M tenant, the small tenants, the service, a framework-free baseline, the sqlite3 CLI, a
 * redis-server…), and the run prepares only what the selected scenarios need: data built by the
 * project's own generator (cached in bench/.data), the real server as a separate process with
 * production settings (limits raised so the limiter rejects nothing), pinned to core 0 with every
 * client on core 1. It prints a Markdown table: the median of several runs, their range, the ratio to a
 * baseline measured in the same run, and each target checked (met or missed). Loopback only,
 * bounded in count and time.
 */
import { join } from 'node:path'
import { benchDataDir, bigTenantFile, prepareData, type DataPart } from './data.ts'
import { CLIENT_CORE, ROOT, startBaseline, startServer, TWO_CORES, type ServerHandle } from './processes.ts'
import { describeMachine } from './machine.ts'
import { BenchUsageError, benchUsage, parseBenchOptions, selectScenarios, settingsOf, type BenchOptions } from './options.ts'
import { Report } from './report.ts'
import { log } from './log.ts'
import { SCENARIOS } from './scenarios/index.ts'
import { missingTool, type Bench, type Need, type Scenario } from './scenario.ts'

let options: BenchOptions
try {
  options = parseBenchOptions(process.argv.slice(2), SCENARIOS.map((scenario) => scenario.name))
} catch (error) {
  if (!(error instanceof BenchUsageError)) throw error
  process.stderr.write(`bench: ${error.message}\n`)
  process.exit(2)
}
if (options.help) {
  console.log(benchUsage(SCENARIOS))
  process.exit(0)
}

// Re-run pinned to the client core, so that this process and every client it starts stay off the server's core.
if (TWO_CORES && !process.env.BENCH_PINNED) {
  const child = Bun.spawn([...CLIENT_CORE, process.execPath, import.meta.path, ...process.argv.slice(2)], {
    env: { ...process.env, BENCH_PINNED: '1' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await child.exited)
}

const started = performance.now()
const settings = settingsOf(options)
const selected = selectScenarios(SCENARIOS, options.only)
const needs = new Set(selected.flatMap((scenario) => scenario.needs))
const missing = missingTool(selected)
if (missing) {
  process.stderr.write(`${missing}\n`)
  process.exit(2)
}

log(`Scenarios: ${selected.map((scenario) => scenario.name).join(', ')}`)
const root = join(ROOT, 'bench', '.data')
// A baseline server serves the big tenant's file, so it brings that part along.
const parts = (['big-tenant', 'small-tenants'] as const satisfies readonly DataPart[]).filter((part) => needs.has(part) || (part === 'big-tenant' && needs.has('baseline')))
if (parts.length > 0) log(`Building data in bench/.data (cached between runs): ${parts.join(', ')}…`)
const data = prepareData(root, parts, log)
const report = new Report(log)

/** The service under test, with the benchmark's settings (the limiter must reject nothing) and `env`. */
const startService = (env: Record<string, string>, name: string, script?: string) =>
  startServer(benchDataDir(root), { RATE_LIMIT_PER_MINUTE: '1000000', TENANT_CACHE_SIZE: '256', ...env }, name, script)

/** What `scenario` may use: what it declared, prepared; anything else fails at once, so that declarations stay true. */
function benchFor(scenario: Scenario, prepared: { server?: ServerHandle; baseline?: Bench['baseline'] }): Bench {
  const need = <T>(name: Need, value: T | undefined): T => {
    if (!scenario.needs.includes(name) || value === undefined) throw new Error(`scenario "${scenario.name}" uses ${name} but does not declare it in its needs`)
    return value
  }
  return {
    settings,
    report,
    log,
    startService,
    get big() {
      return need('big-tenant', data['big-tenant'])
    },
    get small() {
      return need('small-tenants', data['small-tenants'])
    },
    get server() {
      return need('server', prepared.server)
    },
    get baseline() {
      return need('baseline', prepared.baseline)
    },
  }
}

// One server for the whole run, started when the first scenario that needs it comes; a baseline
// for each scenario that needs one, stopped after it.
let server: ServerHandle | undefined
try {
  for (const scenario of selected) {
    // Everything on, as a deployment runs it: the access log at info (startServer), and metrics.
    if (scenario.needs.includes('server')) server ??= await startService({ METRICS_PORT: '0' }, 'bench-server')
    const baseline = scenario.needs.includes('baseline') ? await startBaseline(bigTenantFile(data['big-tenant']!)) : undefined
    try {
      await scenario.run(benchFor(scenario, { server, baseline }))
    } finally {
      await baseline?.stop()
    }
  }
} finally {
  await server?.stop()
}

const machine = describeMachine()
const lines = [
  `## Benchmark results (${new Date().toISOString().slice(0, 10)})`,
  '',
  `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}; Linux ${machine.kernel}; Bun ${machine.bun}, Node ${machine.node}, sqlite3 CLI ${machine['sqlite3 CLI']}, bun:sqlite SQLite ${machine['bun:sqlite (SQLite)']}, Redis ${machine['redis-server']}.`,
  `Server pinned to core 0, clients to core 1${TWO_CORES ? '' : ' (not pinned: one core only)'}. Median of ${settings.runs} runs (exports: ${settings.runs + 2}; pages against the framework-free server: ${settings.pairs} back-to-back pairs of ${settings.pairSeconds} s), min–max in brackets; ratio = median / baseline median in this run, or for paired figures the median of the pairs' ratios.`,
  '',
  ...report.table(),
  '',
  report.targetSummary(),
  '',
  `Total benchmark time: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
]
console.log(lines.join('\n'))
