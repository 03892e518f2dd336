import type { Migration } from '../db/migrator.ts'

/**
 * Tenant-file migrations. Version 1 is the contract schema of docs/operations.md#tenant-schema, as the
 * administration application writes it. Later versions only add what the API needs to read
 * fast (indexes); they never change a table or column of the contract.
 */
export const TENANT_MIGRATIONS: readonly Migration[] = [
  {
    description: 'contract schema (docs/operations.md#tenant-schema)',
    sql: `
      CREATE TABLE locations (
        id   TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        slug TEXT NOT NULL
      );
      CREATE TABLE queues (
        id          TEXT PRIMARY KEY,
        location_id TEXT NOT NULL REFERENCES locations(id),
        name        TEXT NOT NULL,
        slug        TEXT NOT NULL,
        status      TEXT NOT NULL DEFAULT 'ACTIVE'
      );
      CREATE TABLE device_sessions (
        id          TEXT PRIMARY KEY,
        location_id TEXT REFERENCES locations(id),
        device_name TEXT,
        started_at  TEXT NOT NULL,
        ended_at    TEXT
      );
      CREATE TABLE tickets (
        id          TEXT PRIMARY KEY,
        number      INTEGER NOT NULL,
        queue_id    TEXT NOT NULL REFERENCES queues(id),
        location_id TEXT NOT NULL REFERENCES locations(id),
        status      TEXT NOT NULL CHECK (status IN ('WAITING','CALLED','COMPLETED','CANCELED','SKIPPED','NO_SHOW')),
        created_at  TEXT NOT NULL,
        called_at   TEXT, completed_at TEXT, cancelled_at TEXT, skipped_at TEXT, no_show_at TEXT,
        called_by_device_session_id TEXT REFERENCES device_sessions(id),
        customer_name TEXT, notes TEXT, party_size INTEGER, bearer_hash TEXT
      );
      CREATE INDEX tickets_created_at_id ON tickets(created_at, id);
    `,
  },
  {
    description: 'indexes that keep a filtered page in (created_at, id) order without a sort',
    sql: `
      CREATE INDEX tickets_queue_created ON tickets(queue_id, created_at, id);
      CREATE INDEX tickets_location_created ON tickets(location_id, created_at, id);
      CREATE INDEX tickets_status_created ON tickets(status, created_at, id);
    `,
  },
]

/** The newest tenant schema version; `admin` commands migrate files to it. */
export const TENANT_SCHEMA_VERSION = TENANT_MIGRATIONS.length

/** Versions the API serves: the contract's version 1 (slower filters) and every later one. */
export function isServableTenantVersion(version: number): boolean {
  return version >= 1 && version <= TENANT_SCHEMA_VERSION
}
