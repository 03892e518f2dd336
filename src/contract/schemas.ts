import { Type as t, type Static } from '@sinclair/typebox'
import { CHANGED_AFTER_REFUSALS, DEFAULT_PAGE_LIMIT, ERROR_CODES, MAX_PAGE_LIMIT, TICKET_STATUSES } from './vocabulary.ts'

/**
 * TypeBox schemas of everything the API serves. The server's types, the OpenAPI document, the
 * contract tests and the client all derive from these; nothing else spells out the shapes.
 */

const timestamp = t.String({ format: 'date-time', description: 'UTC, YYYY-MM-DDTHH:MM:SS.sssZ (24 characters).', examples: ['2026-03-02T09:05:00.000Z'] })
const nullableTimestamp = (description: string) => t.Union([timestamp, t.Null()], { description })

export const QueueSchema = t.Object(
  {
    id: t.String({ description: 'Queue identifier; usable as a queueId filter.' }),
    name: t.String(),
    slug: t.String(),
    status: t.String({ description: 'ACTIVE, or another status the administration application uses. Every queue is listed whatever its status.' }),
  },
  { additionalProperties: false },
)

export const LocationSchema = t.Object(
  {
    id: t.String({ description: 'Location identifier; usable as a locationId filter.' }),
    name: t.String(),
    slug: t.String(),
    timeZone: t.Union([t.String(), t.Null()], {
      description: "The location's IANA time zone (e.g. Europe/Zurich; renamed zones by their current name, Asia/Kolkata), or null when none is recorded.",
      examples: ['Europe/Zurich'],
    }),
    queues: t.Array(QueueSchema, { description: 'Ordered by name, then id; empty for a location without queues.' }),
  },
  { additionalProperties: false },
)

export const QueuesResponseSchema = t.Object({ locations: t.Array(LocationSchema, { description: 'Ordered by name, then id.' }) }, { additionalProperties: false })

export const TicketStatusSchema = t.Union(TICKET_STATUSES.map((status) => t.Literal(status)))

/** Members in the order of TICKET_FIELDS (a test checks the two agree). */
export const TicketSchema = t.Object(
  {
    id: t.String(),
    number: t.Integer(),
    queueId: t.String(),
    locationId: t.String(),
    status: TicketStatusSchema,
    createdAt: timestamp,
    calledAt: nullableTimestamp('Moment the ticket was called; null when it was not.'),
    completedAt: nullableTimestamp('Moment of completion; null when not completed.'),
    cancelledAt: nullableTimestamp('Moment of cancellation (status CANCELED); null otherwise.'),
    skippedAt: nullableTimestamp('Moment of skipping; null otherwise.'),
    noShowAt: nullableTimestamp('Moment the ticket was marked no-show; null otherwise.'),
    calledByDeviceSessionId: t.Union([t.String(), t.Null()], { description: 'Device session that called the ticket; null when none did.' }),
  },
  { additionalProperties: false },
)

export const TicketPageSchema = t.Object(
  {
    items: t.Array(TicketSchema, { description: `Ordered by createdAt, then id. At most limit (default ${DEFAULT_PAGE_LIMIT}, maximum ${MAX_PAGE_LIMIT}) rows.` }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as cursor with the same from, to and filters; null exactly when no further matching row existed.' }),
    deleted: t.Optional(
      t.Array(t.String(), {
        description:
          'Only with changedAfter, on data that records deletes: ids of the tickets of the range and filters deleted after the token. Together with items at most limit entries; delete them from your copy.',
      }),
    ),
  },
  { additionalProperties: false },
)

export const ErrorCodeSchema = t.Union(ERROR_CODES.map((code) => t.Literal(code)), { description: 'A machine-readable code.' })

export const ErrorSchema = t.Object(
  {
    error: ErrorCodeSchema,
    message: t.String({ description: 'One English sentence.' }),
    requestId: t.String({ description: 'Equal to the X-Request-Id response header.' }),
    param: t.Optional(t.String({ description: 'On a 400 caused by one query parameter: its name.' })),
    reason: t.Optional(
      t.Union(CHANGED_AFTER_REFUSALS.map((reason) => t.Literal(reason)), {
        description: "On a 400 for changedAfter: why. other_history: load the range again without it; other_organisation: the token is another organisation's.",
      }),
    ),
  },
  { additionalProperties: false },
)

export const RateLimitedSchema = t.Object(
  {
    error: t.Literal('rate_limited'),
    message: t.String(),
    retryAfter: t.Integer({ minimum: 1, description: 'Seconds until a request will be accepted (as Retry-After).' }),
    requestId: t.String(),
  },
  { additionalProperties: false },
)

export const TooManyExportsSchema = t.Object(
  {
    error: t.Literal('too_many_exports'),
    message: t.String(),
    retryAfter: t.Integer({ minimum: 1, description: 'Seconds to wait before starting the export again (as Retry-After).' }),
    requestId: t.String(),
  },
  { additionalProperties: false },
)

export const DemoQuotaSchema = t.Object(
  {
    error: t.Literal('demo_quota_exceeded'),
    message: t.String(),
    limit: t.Integer({ description: 'The daily limit of a demo organisation (DEMO_DAILY_QUOTA).' }),
    resetAt: t.String({ format: 'date-time', description: 'The next 00:00:00.000Z, when the quota resets.' }),
    requestId: t.String(),
  },
  { additionalProperties: false },
)

export type Queue = Static<typeof QueueSchema>
export type Location = Static<typeof LocationSchema>
export type QueuesResponse = Static<typeof QueuesResponseSchema>
export type Ticket = Static<typeof TicketSchema>
export type TicketPage = Static<typeof TicketPageSchema>
