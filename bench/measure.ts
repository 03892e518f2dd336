import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cpuOf, ROOT, rssOf, SERVER_CORE } from './processes.ts'
import { log } from './log.ts'
import { quantile } from './stats.ts'

/** How the benchmark takes its measurements: load generators, timed clients, and ways to run sides in turn. */

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  total: number
  statuses: { '2xx': number; non2xx: number; errors: number; timeouts: number }
}

/** `connections` concurrent clients for `seconds`, from autocannon under Node (bench/load.cjs), on random `paths`. */
export async function load(base: string, paths: string[], tokens: string[], connections: number, seconds: number): Promise<LoadResult> {
  const configFile = join(ROOT, 'bench', '.data', 'load-config.json')
  writeFileSync(configFile, JSON.stringify({ base, paths, tokens, connections, duration: seconds }))
  const proc = Bun.spawn(['node', join(ROOT, 'bench', 'load.cjs'), configFile], { stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const result = JSON.parse(out) as LoadResult
  if (result.statuses.non2xx || result.statuses.errors) log(`  warning: ${JSON.stringify(result.statuses)}`)
  return result
}

/**
 * One client, one request at a time over a kept-alive connection, timed with performance.now():
 * autocannon's histogram counts whole milliseconds, too coarse for a 1 ms target. The body is
 * read whole (not parsed) before the next request, as autocannon does. It stops after `seconds`,
 * or after `requests` requests if that comes first.
 */
export async function sequential(base: string, paths: string[], token: string, seconds: number, requests = Infinity): Promise<LoadResult> {
  const latencies: number[] = []
  const statuses = { '2xx': 0, non2xx: 0, errors: 0, timeouts: 0 }
  const begun = performance.now()
  const until = begun + seconds * 1000
  while (performance.now() < until && latencies.length < requests) {
    const started = performance.now()
    const response = await fetch(base + paths[Math.floor(Math.random() * paths.length)]!, { headers: { Authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    if (response.ok) statuses['2xx']++
    else statuses.non2xx++
  }
  if (statuses.non2xx) log(`  warning: ${JSON.stringify(statuses)}`)
  const elapsed = (performance.now() - begun) / 1000
  latencies.sort((a, b) => a - b)
  return { rps: latencies.length / elapsed, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), total: latencies.length, statuses }
}

/** One export read whole by curl (gzip-compressed on the wire with `gzip`): seconds to the first and the last byte, and the bytes received. */
export async function curlExport(url: string, token: string, options: { gzip?: boolean } = {}): Promise<{ ttfb: number; total: number; bytes: number }> {
  const gzip = options.gzip ? ['--compressed'] : []
  const proc = Bun.spawn(['curl', '-s', ...gzip, '-o', '/dev/null', '-w', '%{time_starttransfer} %{time_total} %{size_download} %{http_code}', '-H', `Authorization: Bearer ${token}`, url], { stdout: 'pipe' })
  const [ttfb, total, bytes, status] = (await new Response(proc.stdout).text()).split(' ').map(Number) as [number, number, number, number]
  if (status !== 200) throw new Error(`export answered ${status}`)
  return { ttfb, total, bytes }
}

/** Seconds the sqlite3 CLI takes to write the export's query as CSV (to /dev/null), on the server's core. */
export async function sqliteCli(file: string, from: string, to: string): Promise<number> {
  const sql = `SELECT id, number, queue_id, location_id, status, created_at, called_at, completed_at, cancelled_at, skipped_at, no_show_at, called_by_device_session_id FROM tickets WHERE created_at >= '${from}' AND created_at < '${to}' ORDER BY created_at, id`
  const started = performance.now()
  const proc = Bun.spawn([...SERVER_CORE, 'sqlite3', '-csv', '-header', '-readonly', file, sql], { stdout: Bun.file('/dev/null') })
  if ((await proc.exited) !== 0) throw new Error('sqlite3 failed')
  return (performance.now() - started) / 1000
}

/** Samples `pid`'s RSS every 10 ms while `work` runs; returns the peak. */
export async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = rssOf(pid)
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10)
  try {
    const result = await work()
    return { peak: Math.max(peak, rssOf(pid)), result }
  } finally {
    clearInterval(timer)
  }
}

export async function repeat<T>(times: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < times; i++) out.push(await run(i))
  return out
}

/** Runs `a` and `b` one after the other, `a` first when `turn` is even: neither always gets the warmer machine. */
export async function inTurn<A, B>(turn: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (turn % 2 === 0) {
    const first = await a()
    return [first, await b()]
  }
  const second = await b()
  return [await a(), second]
}

/**
 * Each of `sides` measured once per round, one after the other, in `rounds` + 1 rounds: round r
 * starts with side r (mod the count), so that every side goes first in turn and none always gets
 * the warmer machine. Round 0 warms every side up and is not kept. Returns each side's `rounds`
 * results, in the order of `sides`.
 */
export async function inRounds<S, R>(sides: readonly S[], rounds: number, measure: (side: S) => Promise<R>): Promise<R[][]> {
  const runs = sides.map(() => [] as R[])
  for (let round = 0; round <= rounds; round++) {
    for (let k = 0; k < sides.length; k++) {
      const index = (k + round) % sides.length
      const result = await measure(sides[index]!)
      if (round > 0) runs[index]!.push(result)
    }
  }
  return runs
}

/** `connections` clients on `paths` of `target` for `seconds` with one token (see `load`), and the CPU it used per request. */
export function loadWithCpu(target: { base: string; pids: readonly number[] }, paths: string[], token: string, connections: number, seconds: number): Promise<LoadResult & { cpuPerRequest: number }> {
  return withServerCpu(target.pids, () => load(target.base, paths, [token], connections, seconds))
}

/** One load run, with the CPU time per request (µs) the server used over it: all of its processes (a parent and its workers) when given several. */
export async function withServerCpu<T extends { total: number }>(pids: number | readonly number[], run: () => Promise<T>): Promise<T & { cpuPerRequest: number }> {
  const cpu = () => [pids].flat().reduce((sum, pid) => sum + cpuOf(pid), 0)
  const cpuBefore = cpu()
  const result = await run()
  return { ...result, cpuPerRequest: ((cpu() - cpuBefore) / result.total) * 1e6 }
}

/** `measure` while exports of `url` stream back to back to curl (a fast reader), from 300 ms before it starts until it ends. */
export async function duringBackToBackExports<T>(url: string, token: string, measure: () => Promise<T>): Promise<T> {
  let running = true
  const exporter = (async () => {
    while (running) await curlExport(url, token)
  })()
  try {
    await Bun.sleep(300)
    return await measure()
  } finally {
    running = false
    await exporter
  }
}

/** Microseconds each of `count` calls of `call` took, `concurrency` of them in flight at once; sorted ascending. */
export async function timeCalls(call: () => Promise<unknown>, count: number, concurrency: number): Promise<number[]> {
  const times: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const started = performance.now()
        await call()
        times.push((performance.now() - started) * 1000)
      }
    }),
  )
  return times.sort((a, b) => a - b)
}
