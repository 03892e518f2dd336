import { describe, expect, test } from 'bun:test'
import { BenchUsageError, benchUsage, parseBenchOptions, selectScenarios, settingsOf } from '../../bench/options.ts'
import { SCENARIOS as REGISTRY } from '../../bench/scenarios/index.ts'
import { missingTool } from '../../bench/scenario.ts'

/** The benchmark's option parsing and scenario selection; no benchmark runs here. */

const NAMES = ['csv', 'pages', 'limiter', 'process']
const SCENARIOS = NAMES.map((name) => ({ name, title: `the ${name} scenario`, needs: ['big-tenant'], onlyWhenNamed: name === 'process' }))

function usageError(argv: string[]): string {
  try {
    parseBenchOptions(argv, NAMES)
  } catch (error) {
    expect(error).toBeInstanceOf(BenchUsageError)
    const message = (error as Error).message
    expect(message.split('\n')).toHaveLength(1)
    return message
  }
  throw new Error(`expected ${JSON.stringify(argv)} to be refused`)
}

describe('parseBenchOptions', () => {
  test('no options: the full run with default settings', () => {
    const options = parseBenchOptions([], NAMES)
    expect(options).toEqual({ quick: false, only: null, pairs: null, help: false })
    expect(settingsOf(options)).toEqual({ quick: false, runs: 3, loadSeconds: 5, pairs: 9, pairSeconds: 3 })
  })

  test('--quick, --pairs and --only (comma-separated or repeated)', () => {
    const options = parseBenchOptions(['--quick', '--only', 'limiter,csv', '--only', 'process', '--pairs', '30'], NAMES)
    expect(options).toEqual({ quick: true, only: ['limiter', 'csv', 'process'], pairs: 30, help: false })
    expect(settingsOf(options)).toEqual({ quick: true, runs: 2, loadSeconds: 3, pairs: 30, pairSeconds: 3 })
    expect(settingsOf(parseBenchOptions(['--quick'], NAMES)).pairs).toBe(3)
    expect(parseBenchOptions(['--only=pages'], NAMES).only).toEqual(['pages'])
    expect(parseBenchOptions(['--help'], NAMES).help).toBe(true)
  })

  test('an unknown scenario name stops the run with one line listing the valid names', () => {
    expect(usageError(['--only', 'typo'])).toBe('unknown scenario "typo"; valid names: csv, pages, limiter, process')
    expect(usageError(['--only', 'csv,typo,limitr'])).toBe('unknown scenario "typo", "limitr"; valid names: csv, pages, limiter, process')
    expect(usageError(['--only', ','])).toBe('--only needs scenario names; valid names: csv, pages, limiter, process')
  })

  test('an unknown option, a stray argument or a bad --pairs stops the run with one line', () => {
    expect(usageError(['--typo'])).toBe("unknown option '--typo'; valid options: --quick, --only <name,name,…>, --pairs <N>, --help")
    expect(usageError(['--only'])).toContain("'--only <value>' argument missing; valid options:")
    expect(usageError(['pages'])).toStartWith("unexpected argument 'pages'")
    expect(usageError(['--quick=yes'])).toContain('--quick')
    for (const bad of ['0', '-1', '2.5', 'x', '']) expect(usageError([`--pairs=${bad}`])).toBe(`--pairs needs a whole number of at least 1, got "${bad}"`)
  })
})

describe('selectScenarios', () => {
  test('a full run takes every scenario but those run only when named, in registry order', () => {
    expect(selectScenarios(SCENARIOS, null).map((s) => s.name)).toEqual(['csv', 'pages', 'limiter'])
  })

  test('--only takes exactly the named ones, in registry order, diagnostics included', () => {
    expect(selectScenarios(SCENARIOS, ['limiter']).map((s) => s.name)).toEqual(['limiter'])
    expect(selectScenarios(SCENARIOS, ['process', 'csv']).map((s) => s.name)).toEqual(['csv', 'process'])
  })

  test('the usage lists every scenario with what it needs', () => {
    const usage = benchUsage(SCENARIOS)
    expect(usage).toStartWith('usage: npm run -s bench -- [--quick] [--only <name>,<name>…] [--pairs <N>]')
    for (const name of NAMES) expect(usage).toContain(`  ${name.padEnd(7)}  the ${name} scenario`)
    expect(usage).toContain('the process scenario (only when named); needs big-tenant')
  })
})

test('the registry: one scenario per name, the diagnostic only when named, --only limiter needs no pages', () => {
  const names = REGISTRY.map((scenario) => scenario.name)
  expect(new Set(names).size).toBe(names.length)
  expect(names).toEqual(['csv', 'formatter', 'memory', 'slow-reader', 'pages', 'fairness', 'yield', 'tenants', 'limiter', 'redis', 'sync', 'changes', 'row-check', 'metrics', 'charts', 'process', 'layers'])
  expect(REGISTRY.filter((scenario) => scenario.onlyWhenNamed).map((scenario) => scenario.name)).toEqual(['process', 'layers'])
  const needsOf = (only: string) => selectScenarios(REGISTRY, parseBenchOptions(['--only', only], names).only).flatMap((scenario) => scenario.needs)
  // What `--only limiter` prepares: the big tenant and the server, no baseline, no small tenants, no pages.
  expect(needsOf('limiter')).toEqual(['big-tenant', 'server'])
  // Only the redis scenario needs a redis-server; the changes scenario starts a server of its own on a copy.
  expect(REGISTRY.filter((scenario) => scenario.needs.includes('redis-server')).map((scenario) => scenario.name)).toEqual(['redis'])
  expect(needsOf('redis')).toEqual(['big-tenant', 'server', 'redis-server'])
  expect(needsOf('changes')).toEqual(['big-tenant', 'curl'])
  expect(needsOf('charts')).toEqual(['big-tenant', 'server', 'chromium'])
  // The value rules' scenario makes its own files: nothing prepared.
  expect(needsOf('row-check')).toEqual([])
})

describe('missingTool', () => {
  const only = (names: string[]) => selectScenarios(REGISTRY, names)
  const without = (...missing: string[]) => (program: string) => (missing.includes(program) ? null : `/usr/bin/${program}`)

  test('a missing redis-server stops a run that needs it with one line naming the scenario', () => {
    expect(missingTool(only(['redis']), without('redis-server'))).toBe('bench: redis needs redis-server (Debian: apt-get install redis-server) on the PATH')
    expect(missingTool(only(['redis', 'limiter']), without())).toBeNull()
    // A run that does not need it goes ahead without it.
    expect(missingTool(only(['limiter', 'changes']), without('redis-server'))).toBeNull()
    // A full run takes the redis scenario.
    expect(missingTool(selectScenarios(REGISTRY, null), without('redis-server'))).toStartWith('bench: redis needs redis-server')
  })

  test('as a missing sqlite3 or curl does: every scenario that needs it named', () => {
    expect(missingTool(only(['csv']), without('sqlite3'))).toBe('bench: csv needs the sqlite3 CLI (Debian: apt-get install sqlite3) on the PATH')
    expect(missingTool(only(['memory', 'changes']), without('curl'))).toBe('bench: memory, changes needs curl on the PATH')
  })

  test('the run stops with exit status 2 and that line before preparing anything', async () => {
    const run = Bun.spawn([process.execPath, 'bench/run.ts', '--only', 'redis'], {
      cwd: `${import.meta.dir}/../..`,
      // An empty PATH: no redis-server (BENCH_PINNED skips the re-run under taskset).
      env: { ...process.env, PATH: '', BENCH_PINNED: '1' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [status, stdout, stderr] = await Promise.all([run.exited, new Response(run.stdout).text(), new Response(run.stderr).text()])
    expect({ status, stdout, stderr }).toEqual({ status: 2, stdout: '', stderr: 'bench: redis needs redis-server (Debian: apt-get install redis-server) on the PATH\n' })
  })
})
