import { describe, expect, test } from 'bun:test'
import { BenchUsageError, benchUsage, parseBenchOptions, selectScenarios, settingsOf } from '../../bench/options.ts'
import { SCENARIOS as REGISTRY } from '../../bench/scenarios/index.ts'

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
  expect(names).toEqual(['csv', 'formatter', 'memory', 'slow-reader', 'pages', 'fairness', 'yield', 'tenants', 'limiter', 'sync', 'process'])
  expect(REGISTRY.filter((scenario) => scenario.onlyWhenNamed).map((scenario) => scenario.name)).toEqual(['process'])
  // What `--only limiter` prepares: the big tenant and the server, no baseline, no small tenants, no pages.
  expect(selectScenarios(REGISTRY, parseBenchOptions(['--only', 'limiter'], names).only).flatMap((scenario) => scenario.needs)).toEqual(['big-tenant', 'server'])
})
