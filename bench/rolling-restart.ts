/**
 * `bun bench/rolling-restart.ts [--workers N] [--seconds S] [--reloads R]` (defaults 1, 10, 3):
 * requests failed during rolling restarts under a bounded load on loopback. Starts the service
 * on a fresh data directory (its sample organisation; with N > 1 a redis-server of its own),
 * runs keep-alive and connection-per-request clients against /v1/queues for S seconds, sends
 * the supervisor SIGHUP R times, each after the previous reload completed, and prints what the
 * clients counted. The figure that matters is `failed` (target 0).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startServerProcess } from '../test/support/server-process.ts'
import { startRedis } from '../test/support/redis-server.ts'
import { failedCount, startLoad } from './restart-load.ts'
import { tcpMigrateReq } from '../src/server/tcp-migrate.ts'

const USAGE = 'usage: bun bench/rolling-restart.ts [--workers N] [--seconds S (at most 120)] [--reloads R], whole numbers of at least 1'
const [workers, seconds, reloads] = (() => {
  try {
    const { values } = parseArgs({ options: { workers: { type: 'string', default: '1' }, seconds: { type: 'string', default: '10' }, reloads: { type: 'string', default: '3' } } })
    const numbers = [values.workers, values.seconds, values.reloads].map(Number)
    if (numbers.every((n) => Number.isInteger(n) && n >= 1) && numbers[1]! <= 120) return numbers as [number, number, number]
  } catch {
    // an unknown option or a missing value: the usage below
  }
  process.stderr.write(`${USAGE}\n`)
  process.exit(2)
})()

const dataDir = mkdtempSync(join(tmpdir(), 'qa-api-restart-'))
const redis = workers > 1 ? await startRedis() : undefined
const server = await startServerProcess({
  DATA_DIR: dataDir,
  WORKERS: String(workers),
  RATE_LIMIT_PER_MINUTE: '1000000',
  SAMPLE_DATA: 'on',
  ...(redis ? { REDIS_URL: redis.url } : {}),
})
try {
  const admin = Bun.spawnSync([process.execPath, join(import.meta.dir, '..', 'src', 'cli', 'admin.ts'), 'token', 'create', '--org', 'sample', '--name', 'bench', '--json'], { env: { ...process.env, DATA_DIR: dataDir } })
  const token = JSON.parse(admin.stdout.toString()).token as string
  const load = startLoad({
    base: server.base,
    path: '/v1/queues',
    headers: { Authorization: `Bearer ${token}` },
    keepAliveClients: 4,
    connectionPerRequestClients: 4,
  })
  const reloadsDone = () => (server.output().match(/"event":"reload_complete"/g) ?? []).length
  const started = Date.now()
  for (let reload = 1; reload <= reloads; reload++) {
    await Bun.sleep((seconds * 1000) / (reloads + 1))
    server.process.kill('SIGHUP')
    while (reloadsDone() < reload) {
      if (Date.now() - started > (seconds + 30) * 1000) throw new Error(`reload ${reload} did not complete:\n${server.output()}`)
      await Bun.sleep(20)
    }
  }
  await Bun.sleep(Math.max(0, started + seconds * 1000 - Date.now()))
  const counts = await load.stop()
  const failed = reloadsDone() === reloads ? failedCount(counts) : NaN
  console.log(
    JSON.stringify({ workers, seconds, reloads, tcpMigrateReq: tcpMigrateReq() ?? 'unknown', requests: counts.ok + failedCount(counts), newConnections: counts.newConnections, failed, byCause: counts.failed, toldToClose: counts.toldToClose }),
  )
} finally {
  await server.stop()
  await redis?.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
