import { ControlStore } from '../control/store.ts'
import { litestreamConfig, replicaUrlProblem } from '../replica/litestream-config.ts'
import { restoreRefusal } from '../replica/mark.ts'
import { restoreRound, type RestoreRound } from '../replica/restore.ts'
import { ship } from '../replica/ship.ts'
import { join } from 'node:path'
import { integerOption, parseOptions, requireOption, UsageError } from './args.ts'
import type { CommandOutput } from './commands.ts'

export interface ReplicaContext {
  dataDir: string
  /** Where `restore --every` prints a line per round. */
  out: (text: string) => void
}

const json = { json: { type: 'boolean' } } as const

/**
 * `admin replica …` (docs/operations.md#more-than-one-machine): what the writer's Litestream
 * replicates, and a replica's refresh from it. Dispatched before the admin CLI opens
 * control.sqlite, which on a replica it must neither create nor write.
 */
export function runReplicaCommand(argv: string[], context: ReplicaContext): CommandOutput & { wantsJson: boolean } {
  const [action, ...args] = argv
  switch (action) {
    case 'litestream-config': {
      const { values } = parseOptions(args, { to: { type: 'string' }, ...json })
      const to = replicaUrl(requireOption(values.to, 'to'))
      const store = new ControlStore(context.dataDir)
      try {
        const ids = store.listOrganisations().map((org) => org.id)
        const yaml = litestreamConfig(context.dataDir, ids, to)
        return { wantsJson: !!values.json, json: { config: yaml, organisations: ids.length }, text: [yaml] }
      } finally {
        store.close()
      }
    }
    case 'restore': {
      const { values } = parseOptions(args, { from: { type: 'string' }, every: { type: 'string' }, litestream: { type: 'string' }, ...json })
      const options = { dataDir: context.dataDir, from: replicaUrl(requireOption(values.from, 'from')), litestream: litestreamExecutable(values.litestream) }
      const refusal = restoreRefusal(context.dataDir)
      if (refusal !== undefined) throw new UsageError(refusal)
      if (values.every === undefined) {
        const round = restoreRound(options)
        return { wantsJson: !!values.json, json: round, text: [roundLine(round)], status: round.failed.length ? 1 : 0 }
      }
      if (values.json) throw new UsageError('--json prints one document: give it without --every')
      const everyMs = integerOption(values.every, 'every', 0, 1, 86_400) * 1000
      for (;;) {
        const started = Date.now()
        try {
          context.out(roundLine(restoreRound(options)) + '\n')
        } catch (error) {
          // The next round may well succeed (the writer's storage back, say): keep serving the last copies.
          context.out(`restore failed: ${error instanceof Error ? error.message : String(error)}\n`)
        }
        Bun.sleepSync(Math.max(0, started + everyMs - Date.now()))
      }
    }
    case 'ship':
      throw new UsageError('replica ship runs until stopped: run it as its own command, not from here')
    default:
      throw new UsageError(action === undefined ? 'replica needs litestream-config, ship or restore' : `unknown command "replica ${action}" (admin --help lists the commands)`)
  }
}

/**
 * `admin replica ship --to <url> [--every N] [--litestream P] [--config F]` on the writer: ships
 * control.sqlite and every organisation's file with Litestream, restarting it with a new config
 * whenever an organisation is created or removed (replica/ship.ts). Runs until SIGTERM or
 * SIGINT; resolves to the exit status.
 */
export function runShipCommand(args: string[], context: ReplicaContext): Promise<number> {
  const { values } = parseOptions(args, { to: { type: 'string' }, every: { type: 'string' }, litestream: { type: 'string' }, config: { type: 'string' } })
  const shipping = ship({
    dataDir: context.dataDir,
    to: replicaUrl(requireOption(values.to, 'to')),
    litestream: litestreamExecutable(values.litestream),
    configPath: values.config ?? join(context.dataDir, '.litestream.yml'),
    checkEveryMs: integerOption(values.every ?? '5', 'every', 0, 1, 3600) * 1000,
    log: (line) => context.out(`${new Date().toISOString()} ${line}\n`),
  })
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => shipping.stop())
  return shipping.done.then(() => 0)
}

function litestreamExecutable(given: string | undefined): string {
  const litestream = given ?? 'litestream'
  if (Bun.which(litestream) === null) throw new UsageError(`cannot run "${litestream}": install Litestream 0.3, or give its path with --litestream`)
  return litestream
}

function replicaUrl(url: string): string {
  const problem = replicaUrlProblem(url)
  if (problem !== undefined) throw new UsageError(problem)
  return url
}

function roundLine(round: RestoreRound): string {
  const failed = round.failed.map(({ file, reason }) => `; ${file} not restored: ${reason}`).join('')
  const removed = round.removed.length ? `, ${round.removed.length} removed (organisation deleted)` : ''
  return `${new Date().toISOString()} restored ${round.restored.length} file(s), ${round.unchanged} unchanged${removed}, in ${round.ms} ms${failed}`
}
