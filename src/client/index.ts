/**
 * The client of the queue analytics API, importable as the package's `./client` export. It
 * depends on nothing but `fetch`, so it runs unchanged in Bun, Node ≥ 20 and browsers.
 */
export { Client, type ClientOptions, type TicketQuery, type PageOfTickets, type CsvExport, type ChangeSet, type CallOptions } from './client.ts'
export type { RetryEvent } from './retry.ts'
export * from './errors.ts'
export { TimeoutError } from './timeout.ts'
export type { Ticket, TicketPage, Queue, Location, QueuesResponse } from '../contract/schemas.ts'
export { TICKET_STATUSES, TICKET_FIELDS, MAX_RANGE_DAYS, type TicketStatus, type ErrorCode, type ChangedAfterRefusal } from '../contract/vocabulary.ts'
export { compactInstant, exportFileName } from '../contract/instant.ts'
