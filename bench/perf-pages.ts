/**
 * `node_modules/.bin/bun bench/perf-pages.ts [rows] [seconds]` (defaults 500 and 8; needs Linux
 * `perf` and the right to record other processes, e.g. root): where a page's CPU goes, in the
 * service's worker (WORKERS=1) against the framework-free server, both on the benchmark's data
 * (built first if missing: minutes). Each serves 32 connections of pages of `rows` rows for
 * `seconds` while `perf record -e cpu-clock` samples it every 0.5 ms of CPU: a software clock,
 * so it works on a VM without hardware counters. Prints the CPU per request (perf's sampling
 * makes both sides slower alike), its split by where the code lies (the kernel, Bun's own
 * binary, code its JIT compiled, libc), and the places that cost the service the most over the
 * baseline. Bun's binary carries no symbols: a place in it is one instruction's address, not a
 * function (docs/decisions/0026-page-cost-accounting.md says how to read them).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchDataDir, bigTenantFile, prepareData } from './data.ts'
import { ROOT, startBaseline, startServer, track, type BaselineHandle, type ServerHandle } from './processes.ts'
import { cursorPaths } from './cursors.ts'
import { load } from './measure.ts'

const USAGE = 'usage: node_modules/.bin/bun bench/perf-pages.ts [rows per page, 1-1000] [seconds, 1-120]\n'
/** perf's sampling period: one sample per 0.5 ms of CPU (a fixed period, never throttled to a rate). */
const PERIOD_NS = 500_000

const rows = Number(process.argv[2] ?? 500)
const seconds = Number(process.argv[3] ?? 8)
if (!Number.isInteger(rows) || rows < 1 || rows > 1000 || !(seconds >= 1 && seconds <= 120)) {
  process.stderr.write(USAGE)
  process.exit(2)
}
if (Bun.spawnSync(['perf', '--version'], { stdout: 'ignore', stderr: 'ignore' }).exitCode !== 0) {
  process.stderr.write('bench/perf-pages.ts needs Linux perf (Debian: apt-get install linux-perf)\n')
  process.exit(2)
}

/** Samples a process's CPU (every thread) while `work` runs into `file`; throws when perf recorded nothing. */
async function sampled<T>(pid: number, file: string, work: () => Promise<T>): Promise<T> {
  const perf = track(Bun.spawn(['perf', 'record', '-q', '-e', 'cpu-clock', '-c', String(PERIOD_NS), '-p', String(pid), '-o', file], { stdout: 'ignore', stderr: 'pipe' }))
  await Bun.sleep(300) // perf attached before the load starts
  try {
    return await work()
  } finally {
    perf.kill('SIGINT')
    await perf.exited
    if (!existsSync(file) || statSync(file).size === 0) {
      throw new Error(`perf recorded nothing (not allowed to record other processes? run as root): ${(await new Response(perf.stderr).text()).trim()}`)
    }
  }
}

/** Samples per place (`dso`, or `dso symbol`), from perf's report of `file`. */
function samplesBy(file: string, sort: 'dso' | 'dso,sym'): Map<string, number> {
  const report = Bun.spawnSync(['perf', 'report', '-i', file, '--no-children', '-g', 'none', '--sort', sort, '--stdio', '-F', `sample,${sort}`])
  const counts = new Map<string, number>()
  for (const line of report.stdout.toString().split('\n')) {
    const match = /^\s+(\d+)\s+(.+?)\s*$/.exec(line)
    if (!match) continue
    // Code the JIT compiled is named by thread: one place for all of it.
    const place = match[2]!.replace(/\s+/g, ' ').replace(/\[JIT\] tid \d+/, '[JIT]')
    counts.set(place, (counts.get(place) ?? 0) + Number(match[1]))
  }
  if (report.exitCode !== 0 || counts.size === 0) throw new Error(`perf report of ${file} failed: ${report.stderr.toString().trim()}`)
  return counts
}

const root = join(ROOT, 'bench', '.data')
const big = prepareData(root, ['big-tenant'], (line) => process.stderr.write(line + '\n'))['big-tenant']!
const token = big.bigTokens[0]!
const paths = cursorPaths(big, rows)
const work = mkdtempSync(join(tmpdir(), 'qa-api-perf-'))
let server: ServerHandle | undefined
let baseline: BaselineHandle | undefined
try {
  server = await startServer(benchDataDir(root), { RATE_LIMIT_PER_MINUTE: '1000000', TENANT_CACHE_SIZE: '256', WORKERS: '1' }, 'perf-pages-server')
  baseline = await startBaseline(bigTenantFile(big))
  const sides = [
    { name: 'service worker', base: server.base, pid: server.pid, list: paths.ours },
    { name: 'framework-free', base: baseline.base, pid: baseline.pid, list: paths.baseline },
  ]
  const measured = []
  for (const side of sides) {
    await load(side.base, side.list, [token], 32, 2) // warm-up
    const file = join(work, `${side.pid}.data`)
    const result = await sampled(side.pid, file, () => load(side.base, side.list, [token], 32, seconds))
    const microsEach = PERIOD_NS / 1000 / result.total
    measured.push({ ...side, requests: result.total, microsEach, byDso: samplesBy(file, 'dso'), bySymbol: samplesBy(file, 'dso,sym') })
  }
  const [ours, base] = measured as [(typeof measured)[number], (typeof measured)[number]]
  const total = (side: typeof ours) => [...side.byDso.values()].reduce((a, b) => a + b, 0) * side.microsEach
  console.log(`pages of ${rows} rows, 32 connections, ${seconds} s each, µs of CPU per request (under perf)`)
  for (const side of [ours, base]) console.log(`  ${side.name}: ${side.requests} requests, ${total(side).toFixed(0)} µs`)
  const row = (label: string, a: number, b: number) => console.log(`  ${label.padEnd(48)} ${a.toFixed(1).padStart(7)} ${b.toFixed(1).padStart(7)} ${(a - b).toFixed(1).padStart(7)}`)
  console.log(`  ${'where'.padEnd(48)} ${'service'.padStart(7)} ${'free'.padStart(7)} ${'more'.padStart(7)}`)
  for (const dso of new Set([...ours.byDso.keys(), ...base.byDso.keys()])) row(dso, (ours.byDso.get(dso) ?? 0) * ours.microsEach, (base.byDso.get(dso) ?? 0) * base.microsEach)
  console.log('  the places (instructions) costing the service most over the baseline:')
  const places = [...new Set([...ours.bySymbol.keys(), ...base.bySymbol.keys()])].filter((place) => !place.startsWith('[JIT]'))
  const more = places.map((place) => ({ place, a: (ours.bySymbol.get(place) ?? 0) * ours.microsEach, b: (base.bySymbol.get(place) ?? 0) * base.microsEach }))
  for (const { place, a, b } of more.sort((x, y) => y.a - y.b - (x.a - x.b)).slice(0, 8)) row(place, a, b)
} finally {
  await server?.stop()
  await baseline?.stop()
  rmSync(work, { recursive: true, force: true })
}
