import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildCompiledFile } from '../test/support/compiled-file.ts'
import { freePort } from '../test/support/free-port.ts'

/**
 * `npm run -s bench:startup`: how long the service takes from its command to its first `/readyz`
 * 200, and the resident memory of the serving process once idle, for `npm start`, the `bun
 * src/main.ts` it runs, and the compiled file. Each starts RUNS times on one data directory whose
 * sample organisation a first start has made; the medians are printed.
 */

const RUNS = 7
const IDLE_MS = 2_000
const ROOT = join(import.meta.dir, '..')

/** The resident set of `pid` and of its descendants (npm's own process and the server it starts). */
function residentKiB(pid: number): number {
  const own = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  return own + children.reduce((sum, child) => sum + residentKiB(child), 0)
}

async function startOnce(argv: string[], dataDir: string) {
  const port = await freePort()
  const started = performance.now()
  const child = Bun.spawn(argv, { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }, stdout: 'ignore', stderr: 'ignore' })
  try {
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)
      if (ready) break
      if (child.exitCode !== null) throw new Error(`${argv.join(' ')} exited ${child.exitCode}`)
      await Bun.sleep(2)
    }
    const startMs = performance.now() - started
    await Bun.sleep(IDLE_MS)
    return { startMs, rssMiB: residentKiB(child.pid) / 1024 }
  } finally {
    child.kill('SIGTERM')
    await child.exited
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const file = buildCompiledFile()
const dataDir = mkdtempSync(join(tmpdir(), 'qa-api-startup-'))
try {
  const commands: [string, string[]][] = [
    ['npm start', ['npm', 'start', '--silent']],
    ['bun src/main.ts', [process.execPath, 'src/main.ts']],
    ['dist/queue-api', [file.path]],
  ]
  await startOnce(commands[2]![1], dataDir) // the first start makes the sample organisation
  console.log('| command | start to first /readyz 200 (median ms) | resident memory idle (median MiB) |')
  console.log('|---|---|---|')
  for (const [name, argv] of commands) {
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await startOnce(argv, dataDir))
    console.log(`| \`${name}\` | ${Math.round(median(runs.map((r) => r.startMs)))} | ${median(runs.map((r) => r.rssMiB)).toFixed(0)} |`)
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
  file.remove()
}
