import type { Subprocess } from 'bun'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore, type Plan } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { restoreRound } from '../../src/replica/restore.ts'
import { openTenant, tempDataDir } from './harness.ts'
import { writeBulkTickets, writeStructure, type BulkTickets } from './fixtures.ts'
import { startServerProcess, type ServerProcess } from './server-process.ts'
import { LITESTREAM } from './litestream.ts'
import { startHaproxy, type Haproxy } from './haproxy.ts'

/**
 * The parts the replica tests (docs/operations.md#more-than-one-machine) share, every one real:
 * a temp root with the writer's data directory and Litestream's file:// storage in it; replicas,
 * each refreshed by `admin replica restore --every N` and served by a server process; HAProxy
 * in front. What ships the writer (plain `litestream replicate`, or `admin replica ship`) is
 * the test's own.
 */
export interface Replica {
  dir: string
  server: ServerProcess
  port: number
  restorer: Subprocess
}

/** A writer's organisations, seeded; `token` makes API tokens until `close`. */
export interface SeededWriter {
  ids: string[]
  token(organisationId: string, name: string): { token: string; id: string }
  close(): void
}

export class ReplicaTopology {
  readonly root = tempDataDir()
  readonly writerDir = join(this.root.dir, 'writer')
  readonly storageUrl = `file://${join(this.root.dir, 'storage')}`
  /** Every replica started, in order, also those of a start-up that failed half-way (stop() stops them). */
  readonly replicas: Replica[] = []
  #haproxy: Haproxy | undefined

  /** Organisations on the writer, each with the fixtures' structure and `bulk` tickets. */
  seedWriter(now: number, organisations: { name: string; plan: Plan }[], bulk: BulkTickets): SeededWriter {
    const store = new ControlStore(this.writerDir)
    const ids = organisations.map(({ name, plan }) => {
      const org = createOrganisationWithTenant(store, { name, plan, apiEnabled: true, now })
      const db = openTenant(this.writerDir, org.id)
      writeStructure(db)
      writeBulkTickets(db, bulk)
      db.close()
      return org.id
    })
    return {
      ids,
      token: (organisationId, name) => {
        const made = store.createToken({ organisationId, name, createdAt: new Date(now).toISOString() })
        return { token: made.token, id: made.record.id }
      },
      close: () => store.close(),
    }
  }

  /** `admin replica restore --every <everySeconds>` into `dir`, until killed. */
  startRestorer(dir: string, everySeconds: number): Subprocess {
    return Bun.spawn([process.execPath, 'src/cli/admin.ts', 'replica', 'restore', '--from', this.storageUrl, '--every', String(everySeconds), '--litestream', LITESTREAM], {
      env: { ...process.env, DATA_DIR: dir },
      stdout: 'ignore',
      stderr: 'ignore',
    })
  }

  /** Restores once into `dir`, retrying until Litestream has shipped a first copy of every file. */
  async firstRestore(dir: string, deadlineMs = 20_000): Promise<void> {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      try {
        if (restoreRound({ dataDir: dir, from: this.storageUrl, litestream: LITESTREAM }).failed.length === 0) return
      } catch (error) {
        if (Date.now() > deadline) throw error
      }
      if (Date.now() > deadline) throw new Error('the first restore did not succeed')
      await Bun.sleep(200)
    }
  }

  /** A replica `name` under the root: restored once, served with `env(dir)`, then refreshed every `everySeconds`. */
  async addReplica(name: string, everySeconds: number, env: (dir: string) => Record<string, string>): Promise<Replica> {
    const dir = join(this.root.dir, name)
    mkdirSync(dir)
    await this.firstRestore(dir)
    const server = await startServerProcess(env(dir))
    const replica = { dir, server, port: Number(new URL(server.base).port), restorer: this.startRestorer(dir, everySeconds) }
    this.replicas.push(replica)
    return replica
  }

  /** HAProxy in front of every replica added so far. */
  async balance(): Promise<Haproxy> {
    this.#haproxy = await startHaproxy(this.root.dir, this.replicas.map((replica) => replica.port))
    return this.#haproxy
  }

  /** HAProxy, then every replica's restorer and server; the root stays until cleanup(). */
  async stop(): Promise<void> {
    await this.#haproxy?.stop()
    for (const replica of this.replicas) {
      replica.restorer.kill('SIGKILL')
      await replica.server.stop().catch(() => {})
    }
  }

  cleanup(): void {
    this.root.cleanup()
  }
}
