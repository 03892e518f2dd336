import { readFileSync } from 'node:fs'

/**
 * Linux resets the connections still waiting in the accept queue of a SO_REUSEPORT listener
 * that closes, which a worker replaced by a rolling restart does; with net.ipv4.tcp_migrate_req=1
 * (Linux 5.14 and later) the kernel moves them to another listener of the port instead.
 * Whether it is on here: undefined where the setting cannot be read (another system, an older kernel).
 */
export function tcpMigrateReq(path = '/proc/sys/net/ipv4/tcp_migrate_req'): boolean | undefined {
  try {
    return readFileSync(path, 'utf8').trim() !== '0'
  } catch {
    return undefined
  }
}
