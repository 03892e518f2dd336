import type { TenantLease } from './lease.ts'
import type { TenantPool } from './pool.ts'

/** Whose file a read is of, and the request it serves (on the pool's log line of a failure). */
export interface TenantRead {
  organisationId: string
  requestId: string
}

/**
 * Runs `read` on the organisation's shared connection and releases the lease however it ends;
 * a SQLite error becomes 503 (see TenantLease.failure).
 */
export function withTenant<T>(pool: TenantPool, { organisationId, requestId }: TenantRead, read: (lease: TenantLease) => T): T {
  const lease = pool.acquire(organisationId, requestId)
  try {
    return read(lease)
  } catch (error) {
    throw lease.failure(error)
  } finally {
    lease.release()
  }
}

/**
 * Runs `read` in one snapshot of the organisation's shared connection (a read transaction), so
 * that everything it reads comes from one state of the file: a page's rows and its X-Changes-Token.
 */
export function inSnapshot<T>(pool: TenantPool, { organisationId, requestId }: TenantRead, read: (lease: TenantLease) => T): T {
  const snapshot = pool.openSnapshot(organisationId, { requestId })
  try {
    return snapshot.read(read)
  } finally {
    snapshot.close()
  }
}
