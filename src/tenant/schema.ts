import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { TICKET_STATUSES } from '../contract/vocabulary.ts'

/**
 * Drizzle schema of a tenant file `DATA_DIR/orgs/<organisationId>.sqlite`, exactly the contract
 * of docs/operations.md#tenant-schema (written by the administration application; read-only for the API).
 */

export const locations = sqliteTable('locations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  slug: text('slug').notNull(),
  /** Schema version 5: an IANA zone name, or NULL when none is known (docs/operations.md#tenant-schema). */
  timeZone: text('time_zone'),
})

export const queues = sqliteTable('queues', {
  id: text('id').primaryKey(),
  locationId: text('location_id').notNull().references(() => locations.id),
  name: text('name').notNull(),
  slug: text('slug').notNull(),
  status: text('status').notNull().default('ACTIVE'),
})

export const deviceSessions = sqliteTable('device_sessions', {
  id: text('id').primaryKey(),
  locationId: text('location_id').references(() => locations.id),
  deviceName: text('device_name'),
  startedAt: text('started_at').notNull(),
  endedAt: text('ended_at'),
})

/** A ticket's lifecycle timestamps: in `tickets`, and the same in the change log's copy. */
const lifecycleColumns = () => ({
  calledAt: text('called_at'),
  completedAt: text('completed_at'),
  cancelledAt: text('cancelled_at'),
  skippedAt: text('skipped_at'),
  noShowAt: text('no_show_at'),
})

export const tickets = sqliteTable(
  'tickets',
  {
    id: text('id').primaryKey(),
    number: integer('number').notNull(),
    queueId: text('queue_id').notNull().references(() => queues.id),
    locationId: text('location_id').notNull().references(() => locations.id),
    status: text('status', { enum: TICKET_STATUSES }).notNull(),
    createdAt: text('created_at').notNull(),
    ...lifecycleColumns(),
    calledByDeviceSessionId: text('called_by_device_session_id').references(() => deviceSessions.id),
    // Typed by the customer, or the secret that lets a customer reach the ticket: NEVER served.
    customerName: text('customer_name'),
    notes: text('notes'),
    partySize: integer('party_size'),
    bearerHash: text('bearer_hash'),
  },
  (table) => [
    index('tickets_created_at_id').on(table.createdAt, table.id),
    index('tickets_queue_created').on(table.queueId, table.createdAt, table.id),
    index('tickets_location_created').on(table.locationId, table.createdAt, table.id),
    index('tickets_status_created').on(table.status, table.createdAt, table.id),
  ],
)

/**
 * The change log of schema version 3 (see migrations.ts), kept by triggers on `tickets`: one row
 * per ticket, holding the version of its latest change and the ticket's served columns as that
 * change left them. Its members are named as those of `tickets`, so that the same query code
 * selects a ticket from either.
 */
export const ticketChanges = sqliteTable('ticket_changes', {
  version: integer('version').primaryKey({ autoIncrement: true }),
  id: text('ticket_id').notNull().unique(),
  number: integer('number').notNull(),
  queueId: text('queue_id').notNull(),
  locationId: text('location_id').notNull(),
  status: text('status', { enum: TICKET_STATUSES }).notNull(),
  createdAt: text('created_at').notNull(),
  ...lifecycleColumns(),
  calledByDeviceSessionId: text('called_by_device_session_id'),
})

/** The one row holding the file's random history id (schema version 3). */
export const changeHistory = sqliteTable('change_history', {
  onlyRow: integer('only_row').primaryKey(),
  historyId: text('history_id').notNull(),
})

/**
 * The deletion log (deletion-log.ts): a tombstone per deleted ticket, its version from the change
 * log's sequence. Members named as those of `tickets`, so that the filters select from it alike.
 */
export const ticketDeletions = sqliteTable('ticket_deletions', {
  version: integer('version').primaryKey(),
  id: text('ticket_id').notNull().unique(),
  queueId: text('queue_id').notNull(),
  locationId: text('location_id').notNull(),
  status: text('status', { enum: TICKET_STATUSES }).notNull(),
  createdAt: text('created_at').notNull(),
})
