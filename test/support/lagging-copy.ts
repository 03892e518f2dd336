import { openTenant, startServer, tempDataDir, type TestServer } from './harness.ts'
import { writeBulkTickets } from './fixtures.ts'
import { copyDataDirForReplica } from './replica-copy.ts'

/** A writer and a replica's copy of it that lags: what copy_behind and X-Changes-Floor are tested on. */
export interface LaggingPair {
  /** The writer's server, with every ticket. */
  fresh: TestServer
  /** A READ_ONLY server on a copy taken before the writer wrote its `after` tickets. */
  lagging: TestServer
  laggingDir: { dir: string; cleanup: () => void }
  orgId: string
  token: string
  close(): Promise<void>
}

/**
 * One organisation seeded with `before` tickets from 2026-01-01, a minute apart; its data
 * directory copied as `admin replica restore` leaves a replica's; then `after` more tickets
 * ('later…', between the first ones) written on the writer, into the same history.
 */
export async function startLaggingPair(before: number, after: number): Promise<LaggingPair> {
  const fresh = await startServer({ rateLimitPerMinute: 1_000_000 })
  const laggingDir = tempDataDir()
  try {
    const seeded = fresh.seeded({ bulk: { count: before, start: '2026-01-01', everySeconds: 60 } })
    copyDataDirForReplica(fresh.dataDir, laggingDir.dir)
    const writer = openTenant(fresh.dataDir, seeded.org.id)
    writeBulkTickets(writer, { count: after, idPrefix: 'later', start: '2026-01-01T00:00:30Z', everySeconds: 60 })
    writer.close()
    const lagging = await startServer({ rateLimitPerMinute: 1_000_000, readOnly: true }, { dataDir: laggingDir.dir })
    return {
      fresh,
      lagging,
      laggingDir,
      orgId: seeded.org.id,
      token: seeded.token,
      async close() {
        await lagging.close()
        await fresh.close()
        laggingDir.cleanup()
      },
    }
  } catch (error) {
    await fresh.close()
    laggingDir.cleanup()
    throw error
  }
}
