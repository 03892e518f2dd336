import type { Migration } from '../db/migrator.ts'

/**
 * The deletion log's schema step (docs/operations.md#change-tracking-in-the-tenant-files): a
 * ticket deleted by any writer leaves a tombstone, whose version is drawn from the change log's
 * own sequence (sqlite_sequence of `ticket_changes`), so that one changes token orders changes
 * and deletes alike and a loader holding it learns of both (docs/decisions/0025-deletes-in-the-change-feed.md).
 * Written into files the administration application owns, so the text explains itself.
 */
const NEXT_VERSION = `
        INSERT INTO sqlite_sequence (name, seq) SELECT 'ticket_changes', 0
          WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'ticket_changes');
        UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'ticket_changes';`

function tombstone(row: 'OLD'): string {
  return `
        DELETE FROM ticket_deletions WHERE ticket_id = ${row}.id;
        INSERT INTO ticket_deletions (version, ticket_id, queue_id, location_id, status, created_at)
        VALUES ((SELECT seq FROM sqlite_sequence WHERE name = 'ticket_changes'), ${row}.id, ${row}.queue_id, ${row}.location_id, ${row}.status, ${row}.created_at);`
}

export const DELETION_LOG_STEP: Migration = {
  description: 'deletion log: a tombstone per deleted ticket, versioned with the change log (docs/operations.md#change-tracking-in-the-tenant-files)',
  sql: `
      CREATE TABLE ticket_deletions (
        -- Kept by the triggers below for the analytics API's changedAfter filter; do not write to it.
        -- One row per ticket deleted since this table was made: the version of its deletion, taken
        -- from ticket_changes' AUTOINCREMENT sequence (so versions of changes and deletes never
        -- collide and only grow), and the columns a loader's filters select it by.
        version     INTEGER PRIMARY KEY,
        ticket_id   TEXT NOT NULL UNIQUE,
        queue_id    TEXT NOT NULL,
        location_id TEXT NOT NULL,
        status      TEXT NOT NULL,
        created_at  TEXT NOT NULL
      );
      CREATE INDEX ticket_deletions_created ON ticket_deletions(created_at, ticket_id);

      CREATE TRIGGER ticket_deletions_after_delete AFTER DELETE ON tickets
      BEGIN
        -- Delete, then insert (never INSERT OR REPLACE): the writer's conflict clause would override it.${NEXT_VERSION}${tombstone('OLD')}
      END;
      CREATE TRIGGER ticket_deletions_after_insert AFTER INSERT ON tickets
      BEGIN
        -- A ticket inserted again under a deleted id is no longer deleted.
        DELETE FROM ticket_deletions WHERE ticket_id = NEW.id;
      END;
      CREATE TRIGGER ticket_deletions_after_id_change AFTER UPDATE OF id ON tickets WHEN OLD.id IS NOT NEW.id
      BEGIN
        -- A ticket whose id changes is, to a loader, the old id deleted and the new one inserted.${NEXT_VERSION}${tombstone('OLD')}
        DELETE FROM ticket_deletions WHERE ticket_id = NEW.id;
      END;
    `,
}
