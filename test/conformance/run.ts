/**
 * `npm run -s contract [-- <bun test options>]` (docs/contract-suite.md): checks the environment,
 * prints the request budget per token, then runs the suite with `bun test`, passing its options
 * through (`--reporter=junit --reporter-outfile=<file>` for CI). Exits with bun test's status, or 2
 * with one line when API_BASE_URL or API_TOKEN is missing or a variable is malformed.
 */
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { optionsFromEnv } from './options.ts'
import { describePlan } from './suite.ts'

const options = optionsFromEnv(process.env)
if ('error' in options) {
  process.stderr.write(options.error + '\n')
  process.exit(2)
}
for (const line of describePlan(options)) process.stdout.write(line + '\n')

const args = process.argv.slice(2)
// bun test does not create the JUnit report's directory, and exits 0 all the same when it cannot
// write the report: a CI job would find no file and no failure.
const outfile = args.flatMap((arg, i) => (arg.startsWith('--reporter-outfile=') ? [arg.slice(19)] : arg === '--reporter-outfile' ? [args[i + 1] ?? ''] : []))[0]
if (outfile) mkdirSync(dirname(outfile), { recursive: true })

// A paced request may wait up to a minute for the window, and the exhausting check a minute more.
const child = Bun.spawn([process.execPath, 'test', '--timeout', '180000', join(import.meta.dir, 'deployment.contract.ts'), ...args], {
  stdio: ['inherit', 'inherit', 'inherit'],
})
process.exit(await child.exited)
