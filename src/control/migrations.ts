import type { Migration } from '../db/migrator.ts'

/** Migrations of control.sqlite; the drizzle schema in schema.ts describes the result. */
export const CONTROL_MIGRATIONS: readonly Migration[] = [
  {
    description: 'organisations, API tokens, demo quota counters, service settings',
    sql: `
      CREATE TABLE organisations (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        slug        TEXT NOT NULL UNIQUE,
        plan        TEXT NOT NULL CHECK (plan IN ('demo','paid')),
        api_enabled INTEGER NOT NULL CHECK (api_enabled IN (0,1)),
        created_at  TEXT NOT NULL
      );
      CREATE TABLE api_tokens (
        id              TEXT PRIMARY KEY,
        organisation_id TEXT NOT NULL REFERENCES organisations(id),
        name            TEXT NOT NULL,
        token_hash      TEXT NOT NULL UNIQUE,
        display_prefix  TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        last_used_at    TEXT,
        revoked_at      TEXT
      );
      CREATE INDEX api_tokens_organisation ON api_tokens(organisation_id);
      CREATE TABLE demo_quota_usage (
        organisation_id TEXT NOT NULL REFERENCES organisations(id),
        day             TEXT NOT NULL,
        count           INTEGER NOT NULL,
        PRIMARY KEY (organisation_id, day)
      ) WITHOUT ROWID;
      CREATE TABLE service_settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
]
