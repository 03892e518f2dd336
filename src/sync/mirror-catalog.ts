import { columnList } from './ticket-columns.ts'

/**
 * What the mirror tells a BI tool about itself, the same on every target: a comment on every
 * table and column (from the contract's field notes), and the view `ticket_details` that joins
 * the names and computes the waits every dashboard would otherwise write again. Each target
 * runs the statements in its own dialect (`secondsBetween`, how a name is qualified).
 */

const SYNCED_AT = 'When sync last wrote this row into the mirror (inserted or changed); an unchanged row keeps its time. For freshness checks and incremental models.'

/** Every table's comment and its columns' comments, by table. */
export const MIRROR_COMMENTS: Record<string, { table: string; columns: Record<string, string> }> = {
  locations: {
    table: 'The organisation\'s locations, as GET /v1/queues lists them; kept equal by sync --reconcile.',
    columns: {
      id: 'Location identifier (the locationId of tickets).',
      name: 'Display name.',
      slug: 'URL-style short name.',
      _synced_at: SYNCED_AT,
      time_zone: "The location's IANA time zone (timeZone of GET /v1/queues); NULL when none is recorded. ticket_details gives local times in it.",
    },
  },
  queues: {
    table: 'The queues of each location, as GET /v1/queues lists them; kept equal by sync --reconcile.',
    columns: {
      id: 'Queue identifier (the queueId of tickets). Names repeat across locations: group by id.',
      location_id: 'The location the queue belongs to (locations.id).',
      name: 'Display name; the same name may belong to queues of several locations.',
      slug: 'Short name.',
      status: 'ACTIVE, or another status the administration application uses.',
      _synced_at: SYNCED_AT,
    },
  },
  tickets: {
    table: 'One row per ticket of the mirrored range, as the API serves it (identifiers, status, lifecycle times in UTC). ticket_details adds names and waits.',
    columns: {
      id: 'Ticket identifier.',
      number: 'Ticket number shown to the customer.',
      queue_id: 'Queue identifier (queues.id).',
      location_id: 'Location identifier (locations.id).',
      status: 'WAITING, CALLED, COMPLETED, CANCELED, SKIPPED or NO_SHOW.',
      created_at: 'When the ticket was created; the API\'s from/to filter applies to it.',
      called_at: 'When the ticket was called; NULL when it was not.',
      completed_at: 'When the ticket was completed; NULL when it was not.',
      cancelled_at: 'When the ticket was cancelled (status CANCELED); NULL otherwise.',
      skipped_at: 'When the ticket was skipped; NULL otherwise.',
      no_show_at: 'When the ticket was marked no-show; NULL otherwise.',
      called_by_device_session_id: 'The device session that called the ticket; NULL when none did.',
      _synced_at: SYNCED_AT,
    },
  },
  _sync_state: {
    table: 'The state of sync (one row): what is mirrored from where, and where the next run starts. Written by sync only.',
    columns: {
      id: 'Always 1.',
      base_url: 'The API this mirror copies.',
      since: 'The start of the mirrored range of creation times.',
      loaded_until: 'Every ticket created before this time is in the mirror.',
      backfill_until: 'Set while a first run\'s backfill is unfinished.',
      changes_token: 'Where the next run\'s changes start (X-Changes-Token).',
      last_run: 'The summary of the last successful run (JSON object).',
      reconcile_from: 'Set while a --reconcile is unfinished: where it goes on.',
    },
  },
}

/** Also the mark of the view's shape: a mirror whose view has another comment is brought up to date (postgres-target.ts). */
export const TICKET_DETAILS_COMMENT =
  "Each ticket with its location_name and queue_name, wait_seconds (called_at - created_at) and service_seconds (completed_at - called_at), NULL where a time is missing; created_local and created_local_day, created_at in the location's own time zone (NULL where the location has none)."

/**
 * The view `ticket_details`; `qualify` names a table of the mirror, `secondsBetween` the engine's
 * difference of two timestamps in seconds, exact to the millisecond (DECIMAL(18,3) in both
 * engines), `localTime` an instant's wall-clock time in a zone named by a column (NULL for a NULL zone).
 */
export function ticketDetailsView(
  qualify: (table: string) => string,
  secondsBetween: (from: string, to: string) => string,
  localTime: (instant: string, zone: string) => string,
): string {
  return `CREATE OR REPLACE VIEW ${qualify('ticket_details')} AS
    SELECT ${columnList('t')}, t._synced_at,
           l.name AS location_name, q.name AS queue_name,
           ${secondsBetween('t.created_at', 't.called_at')} AS wait_seconds,
           ${secondsBetween('t.called_at', 't.completed_at')} AS service_seconds,
           l.time_zone AS location_time_zone,
           ${localTime('t.created_at', 'l.time_zone')} AS created_local,
           CAST(${localTime('t.created_at', 'l.time_zone')} AS DATE) AS created_local_day
      FROM ${qualify('tickets')} t
      LEFT JOIN ${qualify('locations')} l ON l.id = t.location_id
      LEFT JOIN ${qualify('queues')} q ON q.id = t.queue_id`
}

/** The columns of `ticket_details`: those of `tickets`, then the names and the waits. */
export const TICKET_DETAILS_COLUMN_COMMENTS: Record<string, string> = {
  ...MIRROR_COMMENTS.tickets!.columns,
  location_name: 'The name of the ticket\'s location (locations.name); names may repeat: group by location_id.',
  queue_name: 'The name of the ticket\'s queue (queues.name); names repeat across locations: group by queue_id.',
  wait_seconds: 'Seconds from created_at to called_at, exact to the millisecond; NULL when the ticket was not called.',
  service_seconds: 'Seconds from called_at to completed_at, exact to the millisecond; NULL when either is missing.',
  location_time_zone: "The location's IANA time zone (locations.time_zone); NULL when none is recorded.",
  created_local: "created_at as the location's clock showed it (a timestamp without zone, in location_time_zone); NULL when the location has no zone: choose one, e.g. created_at AT TIME ZONE 'Europe/Zurich'.",
  created_local_day: "The location's own calendar day of created_at (the date of created_local): group by it for days as each location lived them; NULL when the location has no zone.",
}

/** `COMMENT ON` statements for every table, column and the view and its columns. */
export function commentStatements(qualify: (table: string) => string): string[] {
  const quote = (text: string) => `'${text.replace(/'/g, "''")}'`
  const statements: string[] = []
  for (const [table, { table: comment, columns }] of Object.entries(MIRROR_COMMENTS)) {
    statements.push(`COMMENT ON TABLE ${qualify(table)} IS ${quote(comment)}`)
    for (const [column, text] of Object.entries(columns)) statements.push(`COMMENT ON COLUMN ${qualify(table)}.${column} IS ${quote(text)}`)
  }
  statements.push(`COMMENT ON VIEW ${qualify('ticket_details')} IS ${quote(TICKET_DETAILS_COMMENT)}`)
  for (const [column, text] of Object.entries(TICKET_DETAILS_COLUMN_COMMENTS)) statements.push(`COMMENT ON COLUMN ${qualify('ticket_details')}.${column} IS ${quote(text)}`)
  return statements
}
