/**
 * `bun bench/log-volume.ts [requests]` (default 1500): bytes the server writes to standard output
 * per request at LOG_LEVEL=info, for a loader paging a week of tickets 100 rows a page (each page
 * after the first carries its cursor) and for a mix without cursors (two ticket queries and
 * /v1/queues). Starts the server from this checkout on a fresh data directory with its sample
 * organisation; prints one JSON line per mix: the mean bytes a request and the median line.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServerProcess } from '../test/support/server-process.ts'

const requests = Number(process.argv[2] ?? 1500)
if (!Number.isInteger(requests) || requests < 1) {
  process.stderr.write('usage: bun bench/log-volume.ts [requests, a whole number of at least 1]\n')
  process.exit(2)
}
const dataDir = mkdtempSync(join(tmpdir(), 'qa-api-log-volume-'))
const server = await startServerProcess({ DATA_DIR: dataDir, SAMPLE_DATA: 'on', RATE_LIMIT_PER_MINUTE: '1000000' })
try {
  const admin = Bun.spawnSync([process.execPath, join(import.meta.dir, '..', 'src', 'cli', 'admin.ts'), 'token', 'create', '--org', 'sample', '--name', 'bench', '--json'], { env: { ...process.env, DATA_DIR: dataDir } })
  const headers = { Authorization: `Bearer ${JSON.parse(admin.stdout.toString()).token}` }
  const to = new Date().toISOString().slice(0, 10)
  const from = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10)
  const week = `from=${from}&to=${to}`
  const mixes: Record<string, (i: number, cursor: string | null) => string> = {
    'paging with cursors': (_i, cursor) => `/v1/tickets?${week}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    'mix without cursors': (i) => [`/v1/tickets?${week}&limit=500`, `/v1/tickets?${week}&status=COMPLETED&limit=100`, '/v1/queues'][i % 3]!,
  }
  for (const [mix, pathOf] of Object.entries(mixes)) {
    const before = server.output().length
    let cursor: string | null = null
    for (let i = 0; i < requests; i++) {
      const body = (await (await fetch(server.base + pathOf(i, cursor), { headers })).json()) as { nextCursor?: string | null }
      cursor = body.nextCursor ?? null
    }
    // The access lines of the last turn are written in the next one (the logger batches).
    while ((server.output().slice(before).match(/"event":"request"/g) ?? []).length < requests) await Bun.sleep(20)
    const written = server.output().slice(before)
    const lines = written.split('\n').filter((line) => line.includes('"event":"request"')).map((line) => Buffer.byteLength(line) + 1).sort((a, b) => a - b)
    console.log(JSON.stringify({ mix, requests, bytesPerRequest: Math.round(Buffer.byteLength(written) / requests), medianLine: lines[lines.length >> 1] }))
  }
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
