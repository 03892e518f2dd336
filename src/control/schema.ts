import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core'

/** Drizzle schema of `DATA_DIR/control.sqlite`; `migrations.ts` creates exactly these tables. */

export const organisations = sqliteTable('organisations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  slug: text('slug').notNull().unique(),
  plan: text('plan', { enum: ['demo', 'paid'] }).notNull(),
  apiEnabled: integer('api_enabled', { mode: 'boolean' }).notNull(),
  createdAt: text('created_at').notNull(),
})

export const apiTokens = sqliteTable('api_tokens', {
  id: text('id').primaryKey(),
  organisationId: text('organisation_id').notNull().references(() => organisations.id),
  name: text('name').notNull(),
  /** SHA-256 of the whole token, hex. The plaintext is never stored. */
  tokenHash: text('token_hash').notNull().unique(),
  /** The first characters of the token, so an operator can tell tokens apart in a list. */
  displayPrefix: text('display_prefix').notNull(),
  createdAt: text('created_at').notNull(),
  lastUsedAt: text('last_used_at'),
  revokedAt: text('revoked_at'),
})

export const demoQuotaUsage = sqliteTable(
  'demo_quota_usage',
  {
    organisationId: text('organisation_id').notNull().references(() => organisations.id),
    /** UTC calendar day, YYYY-MM-DD. */
    day: text('day').notNull(),
    count: integer('count').notNull(),
  },
  (table) => [primaryKey({ columns: [table.organisationId, table.day] })],
)

/** Small key/value settings owned by the service, e.g. the cursor signing key. */
export const serviceSettings = sqliteTable('service_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
})
