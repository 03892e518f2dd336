/**
 * `bun run bench`: the benchmark suite. Builds its own data (cached in bench/.data), starts the
 * real server as a separate process with production settings (limits raised so the limiter
 * does not reject the load), pins the server to core 0 and every client to core 1, measures,
 * and prints a Markdown table: the median of several runs, their range, and the ratio to a
 * baseline measured in the same run. Loopback only, bounded in count and time.
 * Options: --quick (fewer, shorter runs); --only csv,formatter,memory,slow-reader,pages,
 * fairness,yield,tenants,limiter (a subset), and process (a diagnostic, run only when named);
 * --pairs N (pages against the framework-free server in N pairs instead of 9, or 3 with
 * --quick: `--only pages --pairs 30` settles a ratio that nine pairs leave within this
 * machine's noise; also the rounds of `process`).
 */
import { connect } from 'node:net'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildData, bigTenantFile, type BenchData } from './data.ts'
import { CLIENT_CORE, cpuOf, fdsOf, ROOT, rssOf, SERVER_CORE, startServer as startServerProcess, track, TWO_CORES, type ServerHandle } from './processes.ts'
import { describeMachine } from './machine.ts'
import { summarise, type Summary } from './stats.ts'
import { ControlStore } from '../src/control/store.ts'
import { CursorCodec } from '../src/tickets/cursor.ts'
import { parseTicketQuery } from '../src/tickets/query.ts'
import { compareFormatters, readExportRows } from './csv-formatter.ts'


// Re-run pinned to the client core, so that this process and every client it starts stay off the server's core.
if (TWO_CORES && !process.env.BENCH_PINNED) {
  const child = Bun.spawn([...CLIENT_CORE, process.execPath, import.meta.path, ...process.argv.slice(2)], {
    env: { ...process.env, BENCH_PINNED: '1' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await child.exited)
}

const QUICK = process.argv.includes('--quick')
const RUNS = QUICK ? 2 : 3
const LOAD_SECONDS = QUICK ? 3 : 5
/**
 * Pages are compared with the framework-free server in short back-to-back pairs, which side goes
 * first alternating: this machine's speed drifts by a third over minutes, and three long runs
 * of each could not separate that from a 10 % difference.
 */
const pairsArg = process.argv.indexOf('--pairs')
const PAIRS = pairsArg > 0 ? positiveInteger(process.argv[pairsArg + 1], '--pairs') : QUICK ? 3 : 9
const PAIR_SECONDS = 3
const log = (line: string) => process.stderr.write(line + '\n')

function positiveInteger(raw: string | undefined, option: string): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${option} needs a whole number of at least 1, got ${raw}`)
  return value
}

// ---- process helpers --------------------------------------------------------------------------

/** The service under test, with the benchmark's settings (the limiter must reject nothing). */
const startServer = (data: BenchData, env: Record<string, string>, name: string, script?: string) =>
  startServerProcess(data.dataDir, { RATE_LIMIT_PER_MINUTE: '1000000', TENANT_CACHE_SIZE: '256', ...env }, name, script)

async function startBaseline(file: string): Promise<{ base: string; pid: number; stop(): Promise<void> }> {
  const proc = track(Bun.spawn([...SERVER_CORE, process.execPath, 'bench/baseline-server.ts', file], { cwd: ROOT, stdout: 'pipe' }))
  const reader = proc.stdout.getReader()
  const port = new TextDecoder().decode((await reader.read()).value).trim()
  return { base: `http://127.0.0.1:${port}`, pid: proc.pid, stop: async () => { proc.kill(); await proc.exited } }
}

/** Samples `pid`'s RSS every 10 ms while `work` runs; returns the peak. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = rssOf(pid)
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10)
  try {
    const result = await work()
    return { peak: Math.max(peak, rssOf(pid)), result }
  } finally {
    clearInterval(timer)
  }
}

async function curlExport(url: string, token: string): Promise<{ ttfb: number; total: number; bytes: number }> {
  const proc = Bun.spawn(['curl', '-s', '-o', '/dev/null', '-w', '%{time_starttransfer} %{time_total} %{size_download} %{http_code}', '-H', `Authorization: Bearer ${token}`, url], { stdout: 'pipe' })
  const [ttfb, total, bytes, status] = (await new Response(proc.stdout).text()).split(' ').map(Number) as [number, number, number, number]
  if (status !== 200) throw new Error(`export answered ${status}`)
  return { ttfb, total, bytes }
}

async function sqliteCli(file: string, from: string, to: string): Promise<number> {
  const sql = `SELECT id, number, queue_id, location_id, status, created_at, called_at, completed_at, cancelled_at, skipped_at, no_show_at, called_by_device_session_id FROM tickets WHERE created_at >= '${from}' AND created_at < '${to}' ORDER BY created_at, id`
  const started = performance.now()
  const proc = Bun.spawn([...SERVER_CORE, 'sqlite3', '-csv', '-header', '-readonly', file, sql], { stdout: Bun.file('/dev/null') })
  if ((await proc.exited) !== 0) throw new Error('sqlite3 failed')
  return (performance.now() - started) / 1000
}

interface LoadResult {
  rps: number
  p50: number
  p99: number
  total: number
  statuses: { '2xx': number; non2xx: number; errors: number; timeouts: number }
}

async function load(base: string, paths: string[], tokens: string[], connections: number, seconds = LOAD_SECONDS): Promise<LoadResult> {
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
 * read whole (not parsed) before the next request, as autocannon does.
 */
async function sequential(base: string, paths: string[], token: string, seconds = LOAD_SECONDS): Promise<LoadResult> {
  const latencies: number[] = []
  const statuses = { '2xx': 0, non2xx: 0, errors: 0, timeouts: 0 }
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const started = performance.now()
    const response = await fetch(base + paths[Math.floor(Math.random() * paths.length)]!, { headers: { Authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    if (response.ok) statuses['2xx']++
    else statuses.non2xx++
  }
  if (statuses.non2xx) log(`  warning: ${JSON.stringify(statuses)}`)
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), total: latencies.length, statuses }
}

// ---- report -----------------------------------------------------------------------------------

interface Row {
  figure: string
  value: Summary
  unit: string
  baseline?: { name: string; value: Summary }
  /** value / baseline of each back-to-back pair, when measured in pairs; the ratio shown is their median. */
  pairRatios?: Summary
  /** How the ratio reads (value / baseline). */
  target?: string
}
const rows: Row[] = []
const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2))
const show = (s: Summary, unit: string) => `${fmt(s.median)} ${unit} (${fmt(s.min)}–${fmt(s.max)})`

/** Median of the pair ratios when paired; otherwise median / baseline median; none against a zero baseline (autocannon's whole milliseconds). */
function ratioOf(row: Row): string | undefined {
  if (row.pairRatios) return `${row.pairRatios.median.toFixed(2)}× (${row.pairRatios.min.toFixed(2)}–${row.pairRatios.max.toFixed(2)}, ${row.pairRatios.runs} pairs)`
  if (row.baseline && row.baseline.value.median !== 0) return `${(row.value.median / row.baseline.value.median).toFixed(2)}×`
  return undefined
}

function record(row: Row) {
  rows.push(row)
  const ratio = ratioOf(row)
  log(`  ${row.figure}: ${show(row.value, row.unit)}${ratio ? ` ratio ${ratio}` : ''}`)
}

async function repeat<T>(times: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < times; i++) out.push(await run(i))
  return out
}

/** Runs `a` and `b` one after the other, `a` first when `turn` is even: neither always gets the warmer machine. */
async function inTurn<A, B>(turn: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (turn % 2 === 0) {
    const first = await a()
    return [first, await b()]
  }
  const second = await b()
  return [await a(), second]
}

/** One load run, with the server's CPU time per request over it. */
async function withServerCpu<T extends { total: number }>(pid: number, run: () => Promise<T>): Promise<T & { cpuPerRequest: number }> {
  const cpuBefore = cpuOf(pid)
  const result = await run()
  return { ...result, cpuPerRequest: ((cpuOf(pid) - cpuBefore) / result.total) * 1e6 }
}

/** A figure measured in pairs (run i of `ours` with run i of `base`): medians of each side and the median of the pairs' ratios. */
function recordPairs<R>(figure: string, ours: R[], base: R[], baselineName: string, value: (run: R) => number, unit: string, target?: string) {
  record({
    figure,
    value: summarise(ours.map(value)),
    unit,
    baseline: { name: baselineName, value: summarise(base.map(value)) },
    pairRatios: summarise(ours.map((run, i) => value(run) / value(base[i]!))),
    target,
  })
}

// ---- scenarios --------------------------------------------------------------------------------

async function csvExports(data: BenchData, server: ServerHandle) {
  log('CSV export')
  const token = data.bigTokens[0]!
  const file = bigTenantFile(data)
  const baseline = await startBaseline(file)
  try {
    for (const [label, range] of [['100k', data.range100k], ['1M', data.range1m]] as const) {
      const query = `from=${range.from}&to=${range.to}`
      const ourUrl = `${server.base}/v1/exports/tickets.csv?${query}`
      const frameworkFreeUrl = `${baseline.base}/export?${query}`
      // Warm-up (page cache, JIT); then the three are interleaved, so drift of this machine hits them alike.
      await curlExport(ourUrl, token)
      await curlExport(frameworkFreeUrl, token)
      await sqliteCli(file, range.from, range.to)
      const ours: Awaited<ReturnType<typeof curlExport>>[] = []
      const frameworkFree: number[] = []
      const cli: number[] = []
      for (let i = 0; i < RUNS + 2; i++) {
        ours.push(await curlExport(ourUrl, token))
        frameworkFree.push((await curlExport(frameworkFreeUrl, token)).total)
        cli.push(await sqliteCli(file, range.from, range.to))
      }
      const cliSummary = summarise(cli)
      record({ figure: `CSV ${label} rows (${range.rows}): wall time to last byte`, value: summarise(ours.map((r) => r.total)), unit: 's', baseline: { name: 'sqlite3 -csv CLI', value: cliSummary }, target: '≤ 1.3×' })
      record({ figure: `CSV ${label}: framework-free Bun.serve export (same query and formatter, direct stream)`, value: summarise(frameworkFree), unit: 's', baseline: { name: 'sqlite3 -csv CLI', value: cliSummary } })
      record({ figure: `CSV ${label}: rows/s`, value: summarise(ours.map((r) => range.rows / r.total)), unit: 'rows/s', baseline: { name: 'sqlite3 -csv CLI', value: summarise(cli.map((s) => range.rows / s)) } })
      record({ figure: `CSV ${label}: time to first byte`, value: summarise(ours.map((r) => r.ttfb * 1000)), unit: 'ms', target: '≤ 10 ms' })
    }
  } finally {
    await baseline.stop()
  }
}

async function formatters(data: BenchData) {
  log('CSV formatter: ours vs fast-csv (100k rows in memory)')
  const rows = readExportRows(bigTenantFile(data), data.range100k.from, data.range100k.to)
  const result = await compareFormatters(rows, RUNS + 2)
  if (!result.identical) log('  warning: the two formatters wrote different bytes')
  record({ figure: `CSV formatting only, own formatter (same bytes as fast-csv: ${result.identical ? 'yes' : 'NO'})`, value: result.ours, unit: 'rows/s', baseline: { name: 'fast-csv format()', value: result.fastCsv } })
}

async function exportMemory(data: BenchData, server: ServerHandle) {
  log('Export memory')
  const token = data.bigTokens[0]!
  const url = `${server.base}/v1/exports/tickets.csv?from=${data.range1m.from}&to=${data.range1m.to}`
  Bun.gc(true)
  await Bun.sleep(500)
  const idle = rssOf(server.pid)
  const one = await repeat(RUNS, async () => (await peakRss(server.pid, () => curlExport(url, token))).peak - idle)
  const four = await repeat(RUNS, async () => (await peakRss(server.pid, () => Promise.all([0, 1, 2, 3].map((i) => curlExport(url, data.bigTokens[i]!))))).peak - idle)
  const idleMb = { median: idle / 2 ** 20, min: idle / 2 ** 20, max: idle / 2 ** 20, runs: 1 }
  record({ figure: 'server idle RSS', value: idleMb, unit: 'MB' })
  record({ figure: 'RSS over idle during one 1M export (peak)', value: summarise(one.map((b) => b / 2 ** 20)), unit: 'MB', baseline: { name: 'idle RSS', value: idleMb }, target: '≤ 64 MB' })
  record({ figure: 'RSS over idle during 4 concurrent 1M exports (peak)', value: summarise(four.map((b) => b / 2 ** 20)), unit: 'MB', baseline: { name: 'idle RSS', value: idleMb }, target: '≤ 128 MB' })
}

/** A reader at about 1 MB/s for 5 s, then gone. */
async function slowReader(data: BenchData, server: ServerHandle) {
  log('Slow reader')
  const results = await repeat(RUNS, async () => {
    const url = new URL(server.base)
    const logBefore = readFileSync(server.logPath, 'utf8').length
    const rssBefore = rssOf(server.pid)
    const cpuBefore = cpuOf(server.pid)
    let peak = rssBefore
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET /v1/exports/tickets.csv?from=${data.range1m.from}&to=${data.range1m.to} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${data.bigTokens[1]}\r\n\r\n`)
    let received = 0
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      socket.pause()
    })
    const started = Date.now()
    while (Date.now() - started < 5000) {
      // 100 KB every 100 ms: resume until the budget of this slice is read.
      if (received < ((Date.now() - started) / 1000) * 1_000_000) socket.resume()
      peak = Math.max(peak, rssOf(server.pid))
      await Bun.sleep(10)
    }
    socket.destroy()
    let released = false
    const deadline = Date.now() + 5000
    while (!released && Date.now() < deadline) {
      released = /"event":"export_ended"[^\n]*"outcome":"cancelled"/.test(readFileSync(server.logPath, 'utf8').slice(logBefore))
      await Bun.sleep(20)
    }
    return { growth: (peak - rssBefore) / 2 ** 20, cpu: cpuOf(server.pid) - cpuBefore, received, released }
  })
  record({ figure: 'slow reader (1 MB/s for 5 s): RSS growth', value: summarise(results.map((r) => r.growth)), unit: 'MB', target: '≤ 16 MB' })
  record({ figure: 'slow reader: server CPU used', value: summarise(results.map((r) => r.cpu)), unit: 's' })
  record({ figure: 'slow reader: MB read by the client', value: summarise(results.map((r) => r.received / 1e6)), unit: 'MB' })
  const released = results.filter((r) => r.released).length
  record({ figure: `slow reader: statement released after disconnect (${released}/${results.length} runs)`, value: summarise([released / results.length]), unit: '' })
}

/** Cursors spread over the 1M-row range (every 500th row), for our server and for the baseline; computed once (a window query over 1M rows). */
let cursorsCache: ReturnType<typeof computeCursors> | undefined

function computeCursors(data: BenchData): { range: string; ours: string[]; baseline: string[] } {
  const store = new ControlStore(data.dataDir)
  const codec = new CursorCodec(store.cursorSigningKey())
  store.close()
  const { Database } = require('bun:sqlite') as typeof import('bun:sqlite')
  const db = new Database(bigTenantFile(data), { readonly: true })
  const positions = db
    .query(`SELECT created_at AS createdAt, id FROM (SELECT created_at, id, row_number() OVER (ORDER BY created_at, id) AS n FROM tickets) WHERE n % 500 = 0 ORDER BY n`)
    .all() as { createdAt: string; id: string }[]
  db.close()
  const range = `from=${data.range1m.from}&to=${data.range1m.to}`
  const query = parseTicketQuery(new URLSearchParams(range), 'page')
  return {
    range,
    ours: positions.map((p) => codec.encode(data.bigOrgId, query, p)),
    baseline: positions.map((p) => Buffer.from(JSON.stringify([p.createdAt, p.id])).toString('base64url')),
  }
}

/**
 * Page paths of `limit` rows at those cursors (their signature does not cover the limit, so the
 * same cursors serve any page size), and the path of the last full page.
 */
function cursorPaths(data: BenchData, limit = 500): { ours: string[]; baseline: string[]; last: { ours: string; baseline: string } } {
  const cursors = (cursorsCache ??= computeCursors(data))
  const ours = cursors.ours.map((cursor) => `/v1/tickets?${cursors.range}&limit=${limit}&cursor=${cursor}`)
  const baseline = cursors.baseline.map((cursor) => `/?${cursors.range}&limit=${limit}&cursor=${cursor}`)
  // The last full page: 500 rows before the end.
  const lastIndex = Math.floor((data.bigTickets - 501) / 500) - 1
  return { ours, baseline, last: { ours: ours[lastIndex]!, baseline: baseline[lastIndex]! } }
}

/** Seconds to read every row of `firstPage` by following nextCursor, one request at a time. */
async function cursorWalk(firstPage: string, headers: Record<string, string>, expectedRows: number): Promise<number> {
  const started = performance.now()
  let cursor: string | null = null
  let rowsRead = 0
  do {
    const response: Response = await fetch(`${firstPage}${cursor ? `&cursor=${cursor}` : ''}`, { headers })
    const page = (await response.json()) as { items: unknown[]; nextCursor: string | null }
    rowsRead += page.items.length
    cursor = page.nextCursor
  } while (cursor)
  if (rowsRead !== expectedRows) throw new Error(`walk read ${rowsRead} of ${expectedRows}`)
  return (performance.now() - started) / 1000
}

async function pages(data: BenchData, server: ServerHandle) {
  log('JSON pages of 500 rows')
  const baseline = await startBaseline(bigTenantFile(data))
  const paths = cursorPaths(data)
  const token = [data.bigTokens[0]!]
  const results: Record<string, { ours: LoadResult[]; baseline: LoadResult[] }> = {}
  // One client: the sequential timed client (sub-millisecond resolution); 32: autocannon.
  const measure = (base: string, list: string[], connections: number, seconds?: number) =>
    connections === 1 ? sequential(base, list, token[0]!, seconds) : load(base, list, token, connections, seconds)
  const measureWithCpu = (target: { base: string; pid: number }, list: string[], connections: number, seconds?: number) =>
    withServerCpu(target.pid, () => measure(target.base, list, connections, seconds))
  /** PAIRS back-to-back runs of each server, alternating which goes first (neither always gets the warmer machine). */
  const pairedRuns = async (oursPaths: string[], baselinePaths: string[], connections: number) => {
    await measure(server.base, oursPaths, connections, 1) // warm-up
    await measure(baseline.base, baselinePaths, connections, 1)
    const ours: (LoadResult & { cpuPerRequest: number })[] = []
    const base: typeof ours = []
    for (let i = 0; i < PAIRS; i++) {
      const [oursRun, baseRun] = await inTurn(
        i,
        () => measureWithCpu(server, oursPaths, connections, PAIR_SECONDS),
        () => measureWithCpu(baseline, baselinePaths, connections, PAIR_SECONDS),
      )
      ours.push(oursRun)
      base.push(baseRun)
    }
    return { ours, base }
  }
  const frameworkFree = 'framework-free Bun.serve'
  const recordPaired = (figure: string, runs: Awaited<ReturnType<typeof pairedRuns>>, key: 'rps' | 'p50' | 'p99' | 'cpuPerRequest', unit: string, target?: string) =>
    recordPairs(figure, runs.ours, runs.base, frameworkFree, (run) => run[key], unit, target)
  for (const connections of [1, 32]) {
    const runs = await pairedRuns(paths.ours, paths.baseline, connections)
    results[connections] = { ours: runs.ours, baseline: runs.base }
    const client = connections === 1 ? '1 sequential client' : '32 connections (autocannon)'
    recordPaired(`pages, ${client}: req/s`, runs, 'rps', 'req/s', connections === 32 ? '≥ 0.8×' : undefined)
    recordPaired(`pages, ${client}: p50`, runs, 'p50', 'ms', connections === 1 ? '≤ 1 ms' : undefined)
    recordPaired(`pages, ${client}: p99`, runs, 'p99', 'ms', connections === 1 ? '≤ 3 ms' : undefined)
    recordPaired(`pages, ${client}: server CPU per request`, runs, 'cpuPerRequest', 'µs')
  }

  // Pages of 5 rows at the same cursors: what a request costs apart from its rows (auth, limits,
  // validation, cursor, routing, logging), which a 500-row page mostly hides.
  log('JSON pages of 5 rows')
  const fiveRows = cursorPaths(data, 5)
  const small = await pairedRuns(fiveRows.ours, fiveRows.baseline, 32)
  recordPaired('pages of 5 rows, 32 connections: req/s', small, 'rps', 'req/s')
  recordPaired('pages of 5 rows, 32 connections: server CPU per request', small, 'cpuPerRequest', 'µs')

  log('Page depth')
  // The sequential client: autocannon's whole milliseconds cannot tell 0.6 ms from 1 ms.
  const pageQuery = `from=${data.range1m.from}&to=${data.range1m.to}&limit=500`
  const firstPage = `/v1/tickets?${pageQuery}`
  const depth = await repeat(RUNS, async () => ({
    first: await sequential(server.base, [firstPage], token[0]!, 2),
    last: await sequential(server.base, [paths.last.ours], token[0]!, 2),
  }))
  record({ figure: 'last page of 1M rows: p50 latency', value: summarise(depth.map((d) => d.last.p50)), unit: 'ms', baseline: { name: 'first page', value: summarise(depth.map((d) => d.first.p50)) }, target: '≤ 2×' })

  log('Full cursor walk')
  const walks = await repeat(RUNS, (i) =>
    inTurn(
      i,
      () => cursorWalk(`${server.base}/v1/tickets?${pageQuery}`, { Authorization: `Bearer ${token[0]}` }, data.bigTickets),
      () => cursorWalk(`${baseline.base}/?${pageQuery}`, {}, data.bigTickets),
    ),
  )
  record({ figure: `full cursor walk of ${data.bigTickets} rows, limit 500, one client`, value: summarise(walks.map(([ours]) => ours)), unit: 's', baseline: { name: frameworkFree, value: summarise(walks.map(([, base]) => base)) }, target: '< 2.5 s' })
  await baseline.stop()
  return results
}

/**
 * Diagnostic, run only when named (`--only process`): the framework-free baseline's page handler
 * inside the service's own process (bench/service-with-baseline-route.ts), against the same
 * handler in its own process, and our /v1/tickets on that same server; rotated in rounds of
 * PAIR_SECONDS at 32 connections, each side first in turn. It separates what our handler's code
 * costs from what running in the service's process costs any code.
 */
async function processEffect(data: BenchData) {
  log('The process: the baseline page handler inside the service')
  const file = bigTenantFile(data)
  const service = await startServer(data, { BASELINE_FILE: file }, 'bench-process', 'bench/service-with-baseline-route.ts')
  const baseline = await startBaseline(file)
  try {
    const paths = cursorPaths(data)
    const sides = [
      { target: service, paths: paths.ours },
      { target: service, paths: paths.baseline.map((path) => `/baseline-page${path.slice(1)}`) },
      { target: baseline, paths: paths.baseline },
    ]
    const runs = sides.map(() => [] as (LoadResult & { cpuPerRequest: number })[])
    for (let round = 0; round <= PAIRS; round++) {
      for (let k = 0; k < sides.length; k++) {
        const index = (k + round) % sides.length
        const { target, paths: list } = sides[index]!
        const result = await withServerCpu(target.pid, () => load(target.base, list, [data.bigTokens[0]!], 32, PAIR_SECONDS))
        if (round > 0) runs[index]!.push(result) // round 0 warms all three up and is not kept
      }
    }
    const own = runs[2]!
    const versusOwn = (figure: string, side: typeof own, key: 'rps' | 'cpuPerRequest', unit: string) =>
      recordPairs(figure, side, own, 'the same handler in its own process', (run) => run[key], unit)
    versusOwn('process: baseline page handler inside the service, 32 conn.: req/s', runs[1]!, 'rps', 'req/s')
    versusOwn('process: baseline page handler inside the service: server CPU per request', runs[1]!, 'cpuPerRequest', 'µs')
    versusOwn('process: our /v1/tickets on that server, same rounds: req/s', runs[0]!, 'rps', 'req/s')
  } finally {
    await baseline.stop()
    await service.stop()
  }
}

async function fairness(data: BenchData, server: ServerHandle, alone: Record<number, { ours: LoadResult[] }>) {
  log('Pages while 1M exports stream to a fast reader')
  const paths = cursorPaths(data)
  const url = `${server.base}/v1/exports/tickets.csv?from=${data.range1m.from}&to=${data.range1m.to}`
  const duringExports = (measure: () => Promise<LoadResult>) =>
    repeat(RUNS, async () => {
      let running = true
      const exporter = (async () => {
        while (running) await curlExport(url, data.bigTokens[2]!)
      })()
      await Bun.sleep(300)
      const result = await measure()
      running = false
      await exporter
      return result
    })
  const clients = [
    { connections: 1, name: '1 sequential client', measure: () => sequential(server.base, paths.ours, data.bigTokens[0]!) },
    { connections: 32, name: '32 conn.', measure: () => load(server.base, paths.ours, [data.bigTokens[0]!], 32) },
  ]
  for (const { connections, name, measure } of clients) {
    const loaded = await duringExports(measure)
    const aloneRuns = alone[connections]!.ours
    record({ figure: `pages (${name}) during back-to-back 1M exports: req/s`, value: summarise(loaded.map((r) => r.rps)), unit: 'req/s', baseline: { name: 'pages alone', value: summarise(aloneRuns.map((r) => r.rps)) }, target: '≥ 0.5×' })
    record({ figure: `pages (${name}) during back-to-back 1M exports: p99`, value: summarise(loaded.map((r) => r.p99)), unit: 'ms', baseline: { name: 'pages alone', value: summarise(aloneRuns.map((r) => r.p99)) }, target: '≤ 10 ms' })
  }
}

/**
 * The mechanism behind fairness, measured on the framework-free server: one sequential client's
 * pages while 1M exports stream back to back, the export yielding once per chunk (as the
 * service does) or only when the socket pushes back.
 */
async function yieldExperiment(data: BenchData) {
  log('Export fairness mechanism: yield per chunk vs none (framework-free server)')
  const baseline = await startBaseline(bigTenantFile(data))
  const paths = cursorPaths(data).baseline
  const pagesWith = async (yieldFlag: '0' | '1' | null) => {
    let running = yieldFlag !== null
    const exporter = (async () => {
      while (running) await curlExport(`${baseline.base}/export?from=${data.range1m.from}&to=${data.range1m.to}&yield=${yieldFlag}`, 'unused')
    })()
    await Bun.sleep(300)
    const result = await sequential(baseline.base, paths, 'unused')
    running = false
    await exporter
    return result
  }
  try {
    const alone = await repeat(RUNS, () => pagesWith(null))
    const yielding = await repeat(RUNS, () => pagesWith('1'))
    const greedy = await repeat(RUNS, () => pagesWith('0'))
    const s = (list: LoadResult[], key: 'rps' | 'p99') => summarise(list.map((r) => r[key]))
    record({ figure: 'mechanism: pages (1 client) during exports that yield per chunk: req/s', value: s(yielding, 'rps'), unit: 'req/s', baseline: { name: 'pages alone', value: s(alone, 'rps') } })
    record({ figure: 'mechanism: pages during exports that yield per chunk: p99', value: s(yielding, 'p99'), unit: 'ms', baseline: { name: 'pages alone', value: s(alone, 'p99') } })
    record({ figure: 'mechanism: pages (1 client) during exports that yield only on backpressure: req/s', value: s(greedy, 'rps'), unit: 'req/s', baseline: { name: 'pages alone', value: s(alone, 'rps') } })
    record({ figure: 'mechanism: pages during exports that yield only on backpressure: p99', value: s(greedy, 'p99'), unit: 'ms', baseline: { name: 'pages alone', value: s(alone, 'p99') } })
  } finally {
    await baseline.stop()
  }
}

async function tenants(data: BenchData, server: ServerHandle) {
  log('2,000 tenants, cache of 256')
  const hot = data.smallTokens.slice(0, 100)
  await load(server.base, ['/v1/queues'], hot, 8, 1) // open the hot ones
  const fdsBefore = fdsOf(server.pid)
  let fdsPeak = fdsBefore
  const timer = setInterval(() => (fdsPeak = Math.max(fdsPeak, fdsOf(server.pid))), 20)
  const hits = await repeat(RUNS, () => load(server.base, ['/v1/queues'], hot, 8))
  // Random over 2,000 tenants with 256 cached: about 87% of requests open a file.
  const misses = await repeat(RUNS, () => load(server.base, ['/v1/queues'], data.smallTokens, 8))
  clearInterval(timer)
  record({ figure: 'tenants: cache hits (100 hot tenants) p50', value: summarise(hits.map((r) => r.p50)), unit: 'ms' })
  record({ figure: 'tenants: cache hits p99', value: summarise(hits.map((r) => r.p99)), unit: 'ms' })
  record({ figure: 'tenants: random of 2,000 (~87% misses) p50', value: summarise(misses.map((r) => r.p50)), unit: 'ms', baseline: { name: 'cache hits', value: summarise(hits.map((r) => r.p50)) } })
  record({ figure: 'tenants: random of 2,000 p99', value: summarise(misses.map((r) => r.p99)), unit: 'ms', baseline: { name: 'cache hits', value: summarise(hits.map((r) => r.p99)) } })
  record({ figure: 'tenants: open files of the server (peak)', value: summarise([fdsPeak]), unit: 'fds', baseline: { name: 'before the run', value: summarise([fdsBefore]) } })
}

async function limiterCost(data: BenchData, alone: { ours: LoadResult[] }) {
  log('Limiter with 20,000 tokens at the default 60/min')
  const server = await startServer(data, { RATE_LIMIT_PER_MINUTE: '60' }, 'bench-limiter')
  try {
    const paths = cursorPaths(data)
    await load(server.base, paths.ours, data.bigTokens, 32, 1)
    const runs = await repeat(RUNS, () => load(server.base, paths.ours, data.bigTokens, 32))
    record({ figure: 'pages (32 conn.), 20,000 tokens, limit 60/min: req/s', value: summarise(runs.map((r) => r.rps)), unit: 'req/s', baseline: { name: 'one token, limit raised', value: summarise(alone.ours.map((r) => r.rps)) } })
  } finally {
    await server.stop()
  }
}

// ---- main -------------------------------------------------------------------------------------

const started = performance.now()
log(`Building data in bench/.data (cached between runs)…`)
const data = buildData(join(ROOT, 'bench', '.data'), log)
// `--only name,name` runs a subset (names as below); without it, everything runs.
const onlyArg = process.argv.indexOf('--only')
const only = onlyArg > 0 ? new Set(process.argv[onlyArg + 1]!.split(',')) : null
const wanted = (name: string) => !only || only.has(name)
const server = await startServer(data, {}, 'bench-server')
try {
  if (wanted('csv')) await csvExports(data, server)
  if (wanted('formatter')) await formatters(data)
  if (wanted('memory')) await exportMemory(data, server)
  if (wanted('slow-reader')) await slowReader(data, server)
  const needsPages = wanted('pages') || wanted('fairness') || wanted('limiter')
  const pageResults = needsPages ? await pages(data, server) : null
  if (wanted('fairness')) await fairness(data, server, pageResults!)
  if (wanted('yield')) await yieldExperiment(data)
  if (wanted('tenants')) await tenants(data, server)
  if (wanted('limiter')) await limiterCost(data, pageResults![32]!)
  if (only?.has('process')) await processEffect(data)
} finally {
  await server.stop()
}

const machine = describeMachine()
const lines = [
  `## Benchmark results (${new Date().toISOString().slice(0, 10)})`,
  '',
  `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}; Linux ${machine.kernel}; Bun ${machine.bun}, Node ${machine.node}, sqlite3 CLI ${machine['sqlite3 CLI']}, bun:sqlite SQLite ${machine['bun:sqlite (SQLite)']}.`,
  `Server pinned to core 0, clients to core 1${TWO_CORES ? '' : ' (not pinned: one core only)'}. Median of ${RUNS} runs (exports: ${RUNS + 2}; pages against the framework-free server: ${PAIRS} back-to-back pairs of ${PAIR_SECONDS} s), min–max in brackets; ratio = median / baseline median in this run, or for paired figures the median of the pairs' ratios.`,
  '',
  '| figure | result | baseline (same run) | ratio | target |',
  '|---|---|---|---|---|',
  ...rows.map((row) => {
    const ratio = ratioOf(row) ?? '—'
    const baseline = row.baseline ? `${row.baseline.name}: ${show(row.baseline.value, row.unit)}` : '—'
    return `| ${row.figure} | ${show(row.value, row.unit)} | ${baseline} | ${ratio} | ${row.target ?? '—'} |`
  }),
  '',
  `Total benchmark time: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
]
console.log(lines.join('\n'))

