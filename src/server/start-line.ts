import type { Config, LogLevel } from '../config/config.ts'
import { changedSettings } from '../config/changed-settings.ts'
import { createLogger } from '../logger.ts'
import { SERVICE_VERSION, serviceRevision } from '../metrics/build-info.ts'

/**
 * What the supervisor says once its workers listen: which release and commit, how many workers,
 * which settings differ from their defaults (`started`); and a setting of the host that a rolling
 * restart needs (`tcp_migrate_req_off`, `migrateReq` as src/server/tcp-migrate.ts reads it). Both at every LOG_LEVEL but `silent`: an operator who
 * keeps only errors must still be able to tell which build answered, and why a reload reset
 * connections.
 */
export function announceStart(config: Config, write: (line: string, level: LogLevel) => void, url: string, migrateReq: boolean | undefined): void {
  if (config.logLevel === 'silent') return
  const always = createLogger('debug', write)
  always.info('started', { version: SERVICE_VERSION, revision: serviceRevision(), url, workers: config.workers, pid: process.pid, settings: changedSettings(config) })
  if (migrateReq === false) {
    always.warn('tcp_migrate_req_off', { hint: 'set net.ipv4.tcp_migrate_req=1 so that a rolling restart (SIGHUP) resets no connection queued on a worker that stops' })
  }
}
