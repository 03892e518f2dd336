import type { Subprocess } from 'bun'
import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { litestreamConfig } from './litestream-config.ts'
import { organisationIdsIn } from './organisations.ts'

export interface ShipOptions {
  /** The writer's data directory. */
  dataDir: string
  /** Where Litestream replicates (the replicas' --from). */
  to: string
  litestream: string
  /** Where the generated litestream.yml is written. */
  configPath: string
  /** How often control.sqlite's organisations are compared with those shipped. */
  checkEveryMs: number
  /** One line per event (started, organisations changed, Litestream exited). */
  log: (line: string) => void
}

/** The longest wait before starting again a Litestream that keeps exiting. */
const MAX_BACKOFF_MS = 30_000

/**
 * The writer's shipping (`replica ship`): runs `litestream replicate` on a config made from
 * control.sqlite's organisations, and whenever they change (an organisation created or
 * removed) makes the config again and restarts Litestream, so that no one edits it by hand.
 * Litestream 0.3 lists databases one by one and reads its config only at start. A Litestream
 * that exits on its own is started again after a growing wait. `stop()` (SIGTERM) stops
 * Litestream, which syncs what it holds, and resolves `done`.
 */
export function ship(options: ShipOptions): { done: Promise<void>; stop(): void } {
  let shipped = ''
  let child: Subprocess | undefined
  let stopping = false
  let failures = 0
  let retry: Timer | undefined
  let finish = () => {}
  const done = new Promise<void>((resolve) => (finish = resolve))

  const organisations = () => organisationIdsIn(join(options.dataDir, 'control.sqlite'))

  function writeConfig(ids: string[]): void {
    writeFileSync(`${options.configPath}.new`, litestreamConfig(options.dataDir, ids, options.to) + '\n')
    renameSync(`${options.configPath}.new`, options.configPath)
    shipped = ids.join(',')
  }

  function start(): void {
    retry = undefined
    if (stopping) return
    const running = Bun.spawn([options.litestream, 'replicate', '-config', options.configPath], { stdout: 'inherit', stderr: 'inherit' })
    child = running
    const startedAt = Date.now()
    void running.exited.then((status) => {
      if (child !== running) return // replaced on purpose
      child = undefined
      if (stopping) return finish()
      // A Litestream that ran a while and died is started again at once; one that keeps dying, after longer waits.
      failures = Date.now() - startedAt > MAX_BACKOFF_MS ? 1 : failures + 1
      const wait = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1))
      options.log(`litestream exited with status ${status}; starting it again in ${wait / 1000} s`)
      retry = setTimeout(start, wait)
    })
  }

  async function restart(ids: string[]): Promise<void> {
    writeConfig(ids)
    const old = child
    child = undefined
    if (old) {
      old.kill('SIGTERM')
      await old.exited
    }
    if (!retry) start()
  }

  const initial = organisations()
  writeConfig(initial)
  options.log(`shipping control.sqlite and ${initial.length} organisation(s) to ${options.to}`)
  start()
  let checking = false
  const timer = setInterval(() => {
    if (checking || stopping) return
    let ids: string[]
    try {
      ids = organisations()
    } catch (error) {
      // control.sqlite busy or being replaced: the next check sees it.
      options.log(`cannot read the organisations: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    if (ids.join(',') === shipped) return
    const before = new Set(shipped ? shipped.split(',') : [])
    const added = ids.filter((id) => !before.has(id)).length
    options.log(`organisations changed (${added} added, ${before.size + added - ids.length} removed): litestream restarted with ${ids.length}`)
    checking = true
    void restart(ids).finally(() => (checking = false))
  }, options.checkEveryMs)

  return {
    done,
    stop() {
      if (stopping) return
      stopping = true
      clearInterval(timer)
      if (retry) clearTimeout(retry)
      if (child) child.kill('SIGTERM')
      else finish()
    },
  }
}
