import { Database } from 'bun:sqlite'
import { mkdirSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { switchToRollbackMode } from '../../src/replica/rollback-mode.ts'

/**
 * A replica's copy of a writer's data directory as `admin replica restore` leaves it: every
 * SQLite file copied consistently (VACUUM INTO) and switched to rollback mode.
 */
export function copyDataDirForReplica(from: string, to: string): void {
  mkdirSync(join(to, 'orgs'), { recursive: true, mode: 0o700 })
  const files = ['control.sqlite', ...readdirSync(join(from, 'orgs')).filter((name) => name.endsWith('.sqlite')).map((name) => join('orgs', name))]
  for (const file of files) {
    const db = new Database(join(from, file), { readonly: true })
    db.run('VACUUM INTO ?', [join(to, file)])
    db.close()
    switchToRollbackMode(join(to, file))
  }
}

/** Every path under `dir` with its size, modification time and mode: what "nothing written" compares. */
export function directoryState(dir: string): Record<string, string> {
  const state: Record<string, string> = {}
  const walk = (path: string) => {
    const stat = statSync(path, { bigint: true })
    state[relative(dir, path) || '.'] = `${stat.size}:${stat.mtimeNs}:${stat.mode.toString(8)}`
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return state
}
