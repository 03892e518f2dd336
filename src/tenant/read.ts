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

/**
 * Runs `read` in one read transaction on the lease's connection, so that everything it reads
 * comes from one snapshot of the file (a page's rows and its X-Changes-Token). Reads only:
 * ending the transaction commits nothing.
 */
export function inSnapshot<T>(lease: TenantLease, read: () => T): T {
  beginSnapshot(lease)
  try {
    const result = read()
    lease.statement('COMMIT').run()
    return result
  } catch (error) {
    endSnapshot(lease)
    throw error
  }
}

/** Starts a read transaction: its snapshot is taken by the first read, and held until `endSnapshot`. */
export function beginSnapshot(lease: TenantLease): void {
  lease.statement('BEGIN').run()
}

/**
 * Ends the lease's read transaction, if one is open. Never throws: a connection that broke
 * under it is failed and closed by its owner, which ends the transaction as well.
 */
export function endSnapshot(lease: TenantLease): void {
  if (!lease.db.inTransaction) return
  try {
    lease.statement('ROLLBACK').run()
  } catch {
    // see above
  }
}
