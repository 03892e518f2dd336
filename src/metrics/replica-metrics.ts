import { Gauge, type Registry } from 'prom-client'
import type { CopyHealth } from '../replica/copy-state.ts'

/**
 * A replica's copy (READ_ONLY=1 on a directory `replica restore` fills), read from its state
 * file at each scrape by the supervisor: the copy's age, the bound past which it is not ready,
 * and the files it could not restore. Not registered on a writer: no series at all.
 */
export function registerReplicaMetrics(registry: Registry, copy: () => CopyHealth | undefined, maxAgeSeconds: number): void {
  const registers = [registry]
  new Gauge({
    name: 'queue_api_replica_copy_age_seconds',
    help: "Seconds since this replica's copy was last confirmed current against the storage (the start of its last restore round that reached it); absent on a read-only directory no restore loop fills.",
    registers,
    collect() {
      const health = copy()
      if (health) this.set(health.ageSeconds)
    },
  })
  new Gauge({
    name: 'queue_api_replica_copy_max_age_seconds',
    help: 'REPLICA_MAX_AGE_S: past this copy age /readyz fails and a balancer takes the replica out.',
    registers,
  }).set(maxAgeSeconds)
  new Gauge({
    name: 'queue_api_replica_unrestored_files',
    help: "Files control.sqlite names that this replica's last restore round could not restore (their organisations are answered 503).",
    registers,
    collect() {
      this.set(copy()?.unrestored.length ?? 0)
    },
  })
}
