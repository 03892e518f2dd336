/**
 * `node_modules/.bin/bun bench/instructions.ts [--rows 500] [--requests 200] [--layers-off a,b]`:
 * instructions per page request, counted by valgrind's callgrind (Debian: apt-get install
 * valgrind), which a busy or shared machine does not change as it changes timings. Each server
 * runs alone under callgrind on the benchmark's data: the framework-free baseline, then the
 * service in one process (bench/service-layers.ts, LOG_LEVEL=info, metrics on, the layers named
 * switched off). Each is warmed with as many requests as it is then measured on, one at a time;
 * the counters are zeroed between. Slow: a few minutes per server.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { benchDataDir, bigTenantFile, prepareData } from './data.ts'
import { cursorPaths } from './cursors.ts'
import { ROOT, track } from './processes.ts'
import { log } from './log.ts'

const { values } = parseArgs({ args: process.argv.slice(2), options: { rows: { type: 'string', default: '500' }, requests: { type: 'string', default: '200' }, 'layers-off': { type: 'string', default: '' } }, strict: true })
const rows = Number(values.rows)
const requests = Number(values.requests)
if (!Bun.which('valgrind')) throw new Error('bench/instructions.ts needs valgrind on the PATH (Debian: apt-get install valgrind)')

const root = join(ROOT, 'bench', '.data')
const big = prepareData(root, ['big-tenant'], log)['big-tenant']!
const paths = cursorPaths(big, rows)
const token = big.bigTokens[0]!

/** Instructions per request of `command` under callgrind, serving `list` (a server that prints its port, or logs "listening"). */
async function instructionsPerRequest(name: string, command: string[], env: Record<string, string>, list: string[]): Promise<number> {
  const out = join(root, `callgrind-${name}-${rows}`)
  for (const file of readdirSync(root).filter((file) => file.startsWith(`callgrind-${name}-${rows}`))) rmSync(join(root, file))
  const proc = track(Bun.spawn(['valgrind', '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${out}`, '--dump-instr=no', ...command], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'ignore' }))
  const reader = proc.stdout.getReader()
  let text = ''
  let base: string | undefined
  while (!base) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${name} stopped before it listened`)
    text += new TextDecoder().decode(value)
    base = /"event":"listening","url":"([^"]+)"/.exec(text)?.[1] ?? (/^(\d+)\n/.exec(text) ? `http://127.0.0.1:${/^(\d+)\n/.exec(text)![1]}` : undefined)
  }
  void (async () => { while (!(await reader.read()).done); })() // keep its log flowing
  const send = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const response = await fetch(base + list[(i * 7919) % list.length]!, { headers: { Authorization: `Bearer ${token}` } })
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`${name} answered ${response.status}`)
    }
  }
  const control = (option: string) => Bun.spawnSync(['callgrind_control', option, String(proc.pid)], { stdout: 'ignore' })
  await send(requests)
  control('-z')
  await send(requests)
  control('-d')
  // The dump is written when the process next runs, not by callgrind_control: wait for its totals.
  let totals: RegExpExecArray | null = null
  for (let waited = 0; !totals && waited < 120_000; waited += 200) {
    await Bun.sleep(200)
    const dumps = readdirSync(root).filter((file) => file.startsWith(`callgrind-${name}-${rows}.`)).map((file) => readFileSync(join(root, file), 'utf8'))
    totals = dumps.filter((text) => text.includes('Trigger: dump')).map((text) => /^summary: (\d+)$/m.exec(text)).find((match) => match !== null) ?? null
  }
  proc.kill('SIGKILL')
  await proc.exited
  if (!totals) throw new Error(`${name}: callgrind wrote no dump`)
  return Number(totals![1]) / requests
}

const service = { DATA_DIR: benchDataDir(root), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '1000000', TENANT_CACHE_SIZE: '256', LAYERS_OFF: values['layers-off'] }
log(`Pages of ${rows} rows, ${requests} requests each, under callgrind…`)
const baseline = await instructionsPerRequest('baseline', [process.execPath, 'bench/baseline-server.ts', bigTenantFile(big)], {}, paths.baseline)
log(`  framework-free server: ${(baseline / 1e6).toFixed(3)} M instructions per request`)
const ours = await instructionsPerRequest('service', [process.execPath, 'bench/service-layers.ts'], service, paths.ours)
log(`  the service${values['layers-off'] ? `, ${values['layers-off']} off` : ''}: ${(ours / 1e6).toFixed(3)} M instructions per request (${(ours / baseline).toFixed(3)}x; as throughput ${(baseline / ours).toFixed(2)}x)`)
