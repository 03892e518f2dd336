import type { Migration } from '../db/migrator.ts'
import { contractTriggersSql, scanBreaches, TIME_ZONE_TRIGGERS, TIME_ZONE_VERSION, timeZoneTriggersSql } from './row-check.ts'
import { DELETION_LOG_STEP } from './deletion-log.ts'

/**
 * The step back from a migration that only creates tables, indexes and triggers: drop each of
 * them, last made first. Derived from the step itself, so the two cannot drift apart.
 */
function dropsOf(sql: string): string {
  const created = [...sql.matchAll(/CREATE\s+(TABLE|INDEX|TRIGGER)\s+(\w+)/g)].map(([, kind, name]) => `DROP ${kind} ${name};`)
  return created.reverse().join('\n')
}

/**
 * Tenant-file migrations. Version 1 is the contract schema of docs/operations.md#tenant-schema,
 * as the administration application writes it. Later versions only add what the API needs:
 * indexes to read fast (2), the change log and its triggers (3), triggers that refuse rows
 * breaking the contract's value rules (4). Version 5 adds a column to the contract, a location's
 * time zone, written by the administration application (decided with it, as the contract asks).
 * Version 6 adds the deletion log (deletion-log.ts). The read-only API never runs them (`admin migrate` does). Each later version has its step back
 * (`admin migrate --to N`); version 1 has nothing of ours to take away.
 */
export const TENANT_MIGRATIONS: readonly Migration[] = withSteps([
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
  {
    // Written into files the administration application owns, so the text explains itself: SQLite
    // keeps these statements, comments included, and `sqlite3 <file> .schema` shows them.
    description: 'change tracking: the change log kept by triggers, and the history id (docs/operations.md#change-tracking-in-the-tenant-files)',
    sql: `
      CREATE TABLE ticket_changes (
        -- Kept by the triggers below for the analytics API's changedAfter filter; do not write to it.
        -- One row per ticket: the version of its latest change. AUTOINCREMENT: versions only grow
        -- and are never reused, even after the row with the highest one is deleted.
        version     INTEGER PRIMARY KEY AUTOINCREMENT,
        ticket_id   TEXT NOT NULL UNIQUE,
        -- The ticket's served columns as this change left them (never a personal one), so that
        -- the changed tickets are read in one stretch of this table, not one by one from tickets.
        number      INTEGER NOT NULL,
        queue_id    TEXT NOT NULL,
        location_id TEXT NOT NULL,
        status      TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        called_at   TEXT, completed_at TEXT, cancelled_at TEXT, skipped_at TEXT, no_show_at TEXT,
        called_by_device_session_id TEXT
      );
      CREATE TABLE change_history (
        -- A random id of this file's change history, checked against every changedAfter token:
        -- a file made anew gets another one. Give a file restored from a backup a new one too
        -- (UPDATE change_history SET history_id = lower(hex(randomblob(16)))): its versions went back.
        only_row   INTEGER PRIMARY KEY CHECK (only_row = 1),
        history_id TEXT NOT NULL
      );
      INSERT INTO change_history (only_row, history_id) VALUES (1, lower(hex(randomblob(16))));

      CREATE TRIGGER ticket_changes_after_insert AFTER INSERT ON tickets
      BEGIN
        -- Delete, then insert (never INSERT OR REPLACE): the writer's own conflict clause
        -- (UPDATE OR IGNORE, INSERT OR ABORT, ...) overrides the one of a statement in a trigger,
        -- which would then skip the change or fail the writer's statement.
        DELETE FROM ticket_changes WHERE ticket_id = NEW.id;
        INSERT INTO ticket_changes (ticket_id, number, queue_id, location_id, status, created_at, called_at,
          completed_at, cancelled_at, skipped_at, no_show_at, called_by_device_session_id)
        VALUES (NEW.id, NEW.number, NEW.queue_id, NEW.location_id, NEW.status, NEW.created_at, NEW.called_at,
          NEW.completed_at, NEW.cancelled_at, NEW.skipped_at, NEW.no_show_at, NEW.called_by_device_session_id);
      END;
      CREATE TRIGGER ticket_changes_after_update
      AFTER UPDATE OF id, number, queue_id, location_id, status, created_at, called_at, completed_at,
        cancelled_at, skipped_at, no_show_at, called_by_device_session_id ON tickets
      WHEN OLD.id IS NOT NEW.id OR OLD.number IS NOT NEW.number OR OLD.queue_id IS NOT NEW.queue_id
        OR OLD.location_id IS NOT NEW.location_id OR OLD.status IS NOT NEW.status
        OR OLD.created_at IS NOT NEW.created_at OR OLD.called_at IS NOT NEW.called_at
        OR OLD.completed_at IS NOT NEW.completed_at OR OLD.cancelled_at IS NOT NEW.cancelled_at
        OR OLD.skipped_at IS NOT NEW.skipped_at OR OLD.no_show_at IS NOT NEW.no_show_at
        OR OLD.called_by_device_session_id IS NOT NEW.called_by_device_session_id
      BEGIN
        -- Only the 12 columns the API serves: a change of a personal column is not a change a
        -- client can see, nor is an UPDATE that writes the values the columns already hold.
        DELETE FROM ticket_changes WHERE ticket_id IN (OLD.id, NEW.id);
        INSERT INTO ticket_changes (ticket_id, number, queue_id, location_id, status, created_at, called_at,
          completed_at, cancelled_at, skipped_at, no_show_at, called_by_device_session_id)
        VALUES (NEW.id, NEW.number, NEW.queue_id, NEW.location_id, NEW.status, NEW.created_at, NEW.called_at,
          NEW.completed_at, NEW.cancelled_at, NEW.skipped_at, NEW.no_show_at, NEW.called_by_device_session_id);
      END;
      CREATE TRIGGER ticket_changes_after_delete AFTER DELETE ON tickets
      BEGIN
        -- Deletes are not reported: the deleted ticket leaves the log.
        DELETE FROM ticket_changes WHERE ticket_id = OLD.id;
      END;
    `,
  },
  {
    // Refused over rows that already break the rules: a version-4 file then holds only rows that
    // follow them, which is what lets the API stream a version-4 file without checking it first.
    description: 'value rules: triggers that refuse a row breaking the contract (docs/operations.md#what-a-row-must-hold)',
    sql: contractTriggersSql(),
    refuseWhen: (db) => {
      const { count } = scanBreaches(db, 0)
      return count === 0 ? undefined : `${count} row(s) break the tenant contract; \`admin check --org <org>\` lists them`
    },
  },
  {
    // Every location's zone starts NULL (none known): nothing to refuse. The triggers check the
    // name's form; whether the zone exists is checked where it is read (docs/operations.md).
    description: "a location's time zone: locations.time_zone, an IANA name or NULL (docs/operations.md#tenant-schema)",
    sql: `
      ALTER TABLE locations ADD COLUMN time_zone TEXT;
      ${timeZoneTriggersSql()}
    `,
    down: `
      ${TIME_ZONE_TRIGGERS.map((name) => `DROP TRIGGER ${name};`).join('\n')}
      ALTER TABLE locations DROP COLUMN time_zone;
    `,
  },
  DELETION_LOG_STEP,
])

/**
 * Versions 2 and later: each one's step back drops what it made (a dropped change log is a new
 * history when made again), unless the step says its own (one that alters a table).
 */
function withSteps(migrations: Migration[]): Migration[] {
  return migrations.map((migration, index) => (index === 0 ? migration : { ...migration, down: migration.down ?? dropsOf(migration.sql) }))
}

/** The newest tenant schema version; `admin` commands migrate files to it. */
export const TENANT_SCHEMA_VERSION = TENANT_MIGRATIONS.length

/** The first version whose files record their changes: older ones send no X-Changes-Token. */
export const CHANGE_TRACKING_VERSION = 3

export function hasChangeTracking(version: number): boolean {
  return version >= CHANGE_TRACKING_VERSION
}

/** Versions the API serves: the contract's version 1 (slower filters) and every later one. */
/** The first version whose triggers refuse rows that break the contract's value rules. */
export const CONTRACT_TRIGGERS_VERSION = 4

export function hasContractTriggers(version: number): boolean {
  return version >= CONTRACT_TRIGGERS_VERSION
}

/** The first version with `locations.time_zone`: older files serve every location's zone as null. */
export function hasLocationTimeZones(version: number): boolean {
  return version >= TIME_ZONE_VERSION
}

/** The first version whose files record deletes (a tombstone per deleted ticket). */
export const DELETION_LOG_VERSION = TENANT_MIGRATIONS.findIndex((step) => step.description === DELETION_LOG_STEP.description) + 1

export function hasDeletionLog(version: number): boolean {
  return version >= DELETION_LOG_VERSION
}

export function isServableTenantVersion(version: number): boolean {
  return version >= 1 && version <= TENANT_SCHEMA_VERSION
}
