/**
 * `bun run soak [--minutes N]` (default 3): a bounded soak test on loopback. Starts the real
 * server with the benchmark's data, warms it up, then mixes for N minutes: page walks on many
 * tokens, full exports (some abandoned mid-way), bad requests (400/401/404/405) and a token
 * driven into 429s. Afterwards it checks that no answer was a 5xx and that RSS and open file
 * descriptors are back to their level after the warm-up.
 */
import { join } from 'node:path'
import { buildData } from './data.ts'
import { fdsOf, ROOT, rssOf, startServer } from './processes.ts'
import { ControlStore } from '../src/control/store.ts'
import { CursorCodec } from '../src/tickets/cursor.ts'
import { parseTicketQuery } from '../src/tickets/query.ts'

const minutesArg = process.argv.indexOf('--minutes')
const MINUTES = minutesArg > 0 ? Number(process.argv[minutesArg + 1]) : 3
const log = (line: string) => process.stderr.write(line + '\n')

const data = buildData(join(ROOT, 'bench', '.data'), log)
const server = await startServer(data.dataDir, { RATE_LIMIT_PER_MINUTE: '600', TENANT_CACHE_SIZE: '64' }, 'soak-server')
const base = server.base
const rss = () => rssOf(server.pid) / 2 ** 20
const fds = () => fdsOf(server.pid)
const statuses = new Map<string, number>()
const count = (kind: string, status: number) => statuses.set(`${kind} ${status}`, (statuses.get(`${kind} ${status}`) ?? 0) + 1)

const store = new ControlStore(data.dataDir)
const codec = new CursorCodec(store.cursorSigningKey())
store.close()
const range = `from=${data.range1m.from}&to=${data.range1m.to}`
const query = parseTicketQuery(new URLSearchParams(range), 'page')
let tokenIndex = 100
const nextToken = () => data.bigTokens[tokenIndex++ % data.bigTokens.length]!

async function pageWalker(until: number) {
  while (Date.now() < until) {
    // A walk of 20 pages from a random point, on a token of its own (well under 600/min).
    const token = nextToken()
    const start = new Date(Date.parse(data.range1m.from) + Math.random() * 80 * 86_400_000).toISOString()
    let cursor: string | null = codec.encode(data.bigOrgId, query, { createdAt: start, id: '' })
    for (let i = 0; i < 20 && cursor && Date.now() < until; i++) {
      const response: Response = await fetch(`${base}/v1/tickets?${range}&limit=200&cursor=${cursor}`, { headers: { Authorization: `Bearer ${token}` } })
      count('page', response.status)
      cursor = response.ok ? ((await response.json()) as { nextCursor: string | null }).nextCursor : (await response.arrayBuffer(), null)
    }
  }
}

async function exporter(until: number) {
  let n = 0
  while (Date.now() < until) {
    const controller = new AbortController()
    const response = await fetch(`${base}/v1/exports/tickets.csv?from=${data.range100k.from}&to=${data.range100k.to}`, { headers: { Authorization: `Bearer ${nextToken()}` }, signal: controller.signal })
    count('export', response.status)
    const reader = response.body!.getReader()
    const abandon = ++n % 3 === 0 // every third export is abandoned after its first chunk
    try {
      for (;;) {
        const { done } = await reader.read()
        if (done || abandon) break
      }
    } finally {
      if (abandon) controller.abort()
    }
  }
}

async function badClient(until: number) {
  const bad = [
    ['/v1/tickets?from=2026-13-01&to=2026-03-01', true], ['/v1/tickets?from=2026-01-01&to=2026-06-01', true], ['/v1/tickets?queueId=', true],
    ['/v1/exports/tickets.csv?from=2026-01-01&to=2026-01-02&limit=5', true], ['/v1/queues', false], ['/v1/nothing', false], ['/v1/tickets?cursor=x', true],
  ] as const
  while (Date.now() < until) {
    const [path, withToken] = bad[Math.floor(Math.random() * bad.length)]!
    const response = await fetch(base + path, { headers: withToken ? { Authorization: `Bearer ${nextToken()}` } : { Authorization: 'Bearer svc_nope' } })
    count('bad', response.status)
    await response.arrayBuffer()
    const post = await fetch(`${base}/v1/queues`, { method: 'POST' })
    count('bad', post.status)
    await post.arrayBuffer()
  }
}

async function greedy(until: number) {
  const token = data.bigTokens[0]!
  while (Date.now() < until) {
    const response = await fetch(`${base}/v1/queues`, { headers: { Authorization: `Bearer ${token}` } })
    count('greedy', response.status)
    await response.arrayBuffer()
  }
}

async function mix(seconds: number) {
  const until = Date.now() + seconds * 1000
  await Promise.all([...Array.from({ length: 6 }, () => pageWalker(until)), exporter(until), exporter(until), badClient(until), greedy(until)])
}

log(`soak: warm-up 30 s against ${base}`)
await mix(30)
await Bun.sleep(5000)
const warm = { rss: rss(), fds: fds() }
log(`soak: after warm-up RSS ${warm.rss.toFixed(1)} MB, ${warm.fds} fds; mixing for ${MINUTES} min`)
statuses.clear()
const samples: number[] = []
const sampler = setInterval(() => samples.push(rss()), 1000)
const started = Date.now()
await mix(MINUTES * 60)
clearInterval(sampler)
await Bun.sleep(5000)
const after = { rss: rss(), fds: fds() }
await server.stop()

const fiveXX = [...statuses].filter(([key]) => / 5\d\d$/.test(key)).reduce((sum, [, n]) => sum + n, 0)
const total = [...statuses.values()].reduce((a, b) => a + b, 0)
const lines = [
  `## Soak (${new Date().toISOString().slice(0, 10)}, ${MINUTES} min, ${Math.round((Date.now() - started) / 1000)} s)`,
  '',
  '| figure | value |',
  '|---|---|',
  `| requests answered | ${total} |`,
  ...[...statuses].sort().map(([key, n]) => `| ${key} | ${n} |`),
  `| 5xx answers | ${fiveXX} |`,
  `| server RSS after warm-up / peak during / 5 s after | ${warm.rss.toFixed(1)} / ${Math.max(...samples).toFixed(1)} / ${after.rss.toFixed(1)} MB |`,
  `| open file descriptors after warm-up / 5 s after | ${warm.fds} / ${after.fds} |`,
]
console.log(lines.join('\n'))
if (fiveXX > 0 || after.fds > warm.fds + 6 || after.rss > warm.rss * 1.25 + 16) {
  log('soak: FAILED (5xx answers, or resources not back to their warm-up level)')
  process.exit(1)
}
