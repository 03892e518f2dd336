import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface SuiteResult {
  status: number
  stdout: string
  stderr: string
  /** Every test case of bun's JUnit report, by its full name ("group > check"). */
  cases: { name: string; outcome: 'passed' | 'failed' | 'skipped' }[]
  failed: string[]
  skipped: string[]
}

const ENTITIES: Record<string, string> = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" }
const unescapeXml = (text: string) =>
  text.replace(/&(#x?[0-9a-f]+|quot|amp|lt|gt|apos);/gi, (_, entity: string) =>
    entity.startsWith('#') ? String.fromCodePoint(Number(entity.startsWith('#x') ? `0x${entity.slice(2)}` : entity.slice(1))) : ENTITIES[entity]!,
  )

/** The test cases of a JUnit report as bun writes it: `<testcase name classname …>` with a `<failure>` or `<skipped />` inside. */
export function readJunit(xml: string): SuiteResult['cases'] {
  const cases: SuiteResult['cases'] = []
  for (const match of xml.matchAll(/<testcase name="([^"]*)" classname="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const inner = match[4] ?? ''
    const outcome = inner.includes('<failure') || inner.includes('<error') ? 'failed' : inner.includes('<skipped') ? 'skipped' : 'passed'
    cases.push({ name: `${unescapeXml(match[2]!)} > ${unescapeXml(match[1]!)}`, outcome })
  }
  return cases
}

/**
 * Runs the suite as a user does, `npm run -s contract -- --reporter=junit --reporter-outfile=…`,
 * with `env` as its only API_* variables, and reads the report.
 */
export async function runContractSuite(env: Record<string, string>, reportDir: string, label: string): Promise<SuiteResult> {
  // In a directory that does not exist yet: the command creates it (bun test would not).
  const report = join(reportDir, label, 'report.xml')
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('API_')))
  const child = Bun.spawn(['npm', 'run', '-s', 'contract', '--', '--reporter=junit', `--reporter-outfile=${report}`], {
    env: { ...inherited, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  let cases: SuiteResult['cases'] = []
  try {
    cases = readJunit(readFileSync(report, 'utf8'))
  } catch {
    // No report: the run ended before bun test started (a missing variable); status and output say why.
  }
  const named = (outcome: string) => cases.filter((c) => c.outcome === outcome).map((c) => c.name)
  return { status, stdout, stderr, cases, failed: named('failed'), skipped: named('skipped') }
}
