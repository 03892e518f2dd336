import { SQLiteError } from 'bun:sqlite'
import type { TenantLease, TenantPool } from './pool.ts'

/**
 * Runs `read` on a leased tenant connection and releases the lease however it ends. The SQL is
 * ours and fixed, so a SQLite error while reading means the file broke (corrupt, truncated,
 * swapped): the handle is dropped and the request answered 503, never an empty result.
 */
export function withTenant<T>(pool: TenantPool, organisationId: string, read: (lease: TenantLease) => T): T {
  const lease = pool.acquire(organisationId)
  try {
    return read(lease)
  } catch (error) {
    if (error instanceof SQLiteError) throw lease.fail(error)
    throw error
  } finally {
    lease.release()
  }
}
