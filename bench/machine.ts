import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'

/** What the figures were measured on, printed with them. */
export function describeMachine(): Record<string, string> {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  const sqlite = Bun.spawnSync(['sqlite3', '--version']).stdout.toString().split(' ')[0] || 'not installed'
  const memory = /MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]
  return {
    cpu,
    cores: String(cpus().length),
    memory: memory ? `${Math.round(Number(memory) / 1024 / 1024)} GiB` : 'unknown',
    kernel: readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(),
    bun: Bun.version,
    node: Bun.spawnSync(['node', '--version']).stdout.toString().trim(),
    'sqlite3 CLI': sqlite,
    'redis-server': Bun.which('redis-server') ? (/v=(\S+)/.exec(Bun.spawnSync(['redis-server', '--version']).stdout.toString())?.[1] ?? 'unknown') : 'not installed',
    'bun:sqlite (SQLite)': String((new (require('bun:sqlite').Database)(':memory:').query('select sqlite_version() v').get() as { v: string }).v),
  }
}
