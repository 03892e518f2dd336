import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/free-port.ts'
import { eventuallyAsync } from '../support/raw-http.ts'
import { prometheusBinary } from './support.ts'

export interface PrometheusServer {
  /** The value of an instant PromQL query's first series, or undefined when it has none. */
  query(promql: string): Promise<number | undefined>
  stop(): Promise<void>
}

/**
 * A real prometheus (Debian's package; check prometheusAvailable first) on a free loopback port,
 * in a temp directory, scraping `target` (host:port) every `scrapeInterval` as job queue-api.
 */
export async function startPrometheus(target: string, scrapeInterval = '1s'): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'qa-api-prometheus-'))
  writeFileSync(
    join(dir, 'prometheus.yml'),
    ['global:', `  scrape_interval: ${scrapeInterval}`, 'scrape_configs:', '  - job_name: queue-api', '    static_configs:', `      - targets: [${JSON.stringify(target)}]`, ''].join('\n'),
  )
  const api = `http://127.0.0.1:${await freePort()}`
  const child = Bun.spawn(
    [prometheusBinary(), `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${new URL(api).host}`],
    { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' },
  )
  const killOnExit = () => child.kill('SIGKILL')
  process.on('exit', killOnExit)
  await eventuallyAsync(async () => (await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200, 30_000, 'prometheus to be ready')
  return {
    async query(promql) {
      const body = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as { data: { result: { value: [number, string] }[] } }
      const sample = body.data.result[0]
      return sample === undefined ? undefined : Number(sample.value[1])
    },
    async stop() {
      child.kill('SIGTERM')
      await child.exited
      process.off('exit', killOnExit)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
