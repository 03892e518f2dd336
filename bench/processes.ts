import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'

/** Helpers shared by `bun run bench` and `bun run soak`: the server process and what it uses. */

export const ROOT = join(import.meta.dir, '..')
export const TWO_CORES = cpus().length >= 2
/** Servers run on core 0; the benchmark re-runs itself, and so every client, on core 1. */
export const SERVER_CORE = TWO_CORES ? ['taskset', '-c', '0'] : []
export const CLIENT_CORE = TWO_CORES ? ['taskset', '-c', '1'] : []

/** Every process started here, killed on the way out whatever happens (a crash included). */
const children = new Set<{ kill(signal?: number | NodeJS.Signals): void }>()
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})
// A signal's default action ends the process without 'exit': a benchmark stopped by `kill` or a
// timeout would leave its servers running, pinned to a core, for the next run to trip over.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) process.once(signal, () => process.exit(code))

export function track<T extends { kill(signal?: number | NodeJS.Signals): void }>(child: T): T {
  children.add(child)
  return child
}

export interface ServerHandle {
  base: string
  /** The process that serves: worker 0 of the service's supervisor, or the process started when it supervises none. */
  pid: number
  /** Every process of the service (the supervisor and its worker): whose CPU a request costs. */
  pids: number[]
  logPath: string
  stop(): Promise<void>
}

/** Starts `script` (the service) on core 0 with its log in bench/.data/<name>.log, once it listens. */
export async function startServer(dataDir: string, env: Record<string, string>, name: string, script = 'src/main.ts'): Promise<ServerHandle> {
  const logPath = join(ROOT, 'bench', '.data', `${name}.log`)
  writeFileSync(logPath, '') // a previous run's "listening" line must not be mistaken for this one's
  const proc = track(
    Bun.spawn([...SERVER_CORE, process.execPath, script], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdout: Bun.file(logPath),
      stderr: 'inherit',
    }),
  )
  const deadline = Date.now() + 20_000
  for (;;) {
    const log = readFileSync(logPath, 'utf8')
    const match = /"event":"listening","url":"([^"]+)"/.exec(log)
    if (match) {
      const worker = /"event":"worker_started","worker":0,"pid":(\d+)/.exec(log)
      const pid = worker ? Number(worker[1]) : proc.pid
      return { base: match[1]!, pid, pids: [...new Set([proc.pid, pid])], logPath, stop: async () => { proc.kill('SIGTERM'); await proc.exited } }
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start`)
    await Bun.sleep(20)
  }
}

/**
 * The processes of a service started with WORKERS=`workers` (bench/run.ts's startService): the
 * supervisor and each worker once every worker listens.
 */
export async function serviceProcesses(server: ServerHandle, workers: number): Promise<number[]> {
  if (workers <= 1) return server.pids
  const deadline = Date.now() + 20_000
  while (!readFileSync(server.logPath, 'utf8').includes(`"workers":${workers}}`)) {
    if (Date.now() > deadline) throw new Error(`${server.logPath}: the workers did not all listen`)
    await Bun.sleep(20)
  }
  const started = readFileSync(server.logPath, 'utf8').matchAll(/"event":"worker_started","worker":\d+,"pid":(\d+)/g)
  return [...new Set([...server.pids, ...[...started].map((match) => Number(match[1]))])]
}

/** Lets every thread of these processes run on `cores` only (taskset's list: "0", "0,1"); nothing to do on one core. */
export function setCores(pids: readonly number[], cores: string): void {
  if (!TWO_CORES) return
  for (const pid of pids) Bun.spawnSync(['taskset', '-a', '-p', '-c', cores, String(pid)], { stdout: 'ignore' })
}

/**
 * A redis-server of the scenario's own (the `redis-server` need): the tests' launcher, on a free
 * loopback port in a private temp directory, nothing persisted, killed if the run dies. Started
 * from the benchmark's process, it inherits the client core.
 */
export { startRedis, type RedisServer } from '../test/support/redis-server.ts'

export interface BaselineHandle {
  base: string
  pid: number
  /** Its one process, as ServerHandle's `pids`. */
  pids: number[]
  stop(): Promise<void>
}

/** The framework-free baseline (bench/baseline-server.ts) on `file`, on core 0, once it listens. */
export async function startBaseline(file: string): Promise<BaselineHandle> {
  const proc = track(Bun.spawn([...SERVER_CORE, process.execPath, 'bench/baseline-server.ts', file], { cwd: ROOT, stdout: 'pipe' }))
  const reader = proc.stdout.getReader()
  const port = new TextDecoder().decode((await reader.read()).value).trim()
  return { base: `http://127.0.0.1:${port}`, pid: proc.pid, pids: [proc.pid], stop: async () => { proc.kill(); await proc.exited } }
}

/** Resident memory of a process, in bytes. */
export const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
export const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length
/** User + system CPU seconds of a process. */
export function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
