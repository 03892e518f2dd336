import { CHANGES_TOKEN_HEADER, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, TICKET_FIELDS, TICKET_FILTERS } from '../contract/vocabulary.ts'
import {
  DemoQuotaSchema, ErrorSchema, LocationSchema, QueueSchema, QueuesResponseSchema, RateLimitedSchema, TicketPageSchema, TooManyExportsSchema, TicketSchema,
} from '../contract/schemas.ts'

/**
 * The OpenAPI 3.1 document of the public contract, written from the TypeBox schemas and the
 * contract's values (the filters from their one table), so that it cannot drift from what the
 * server parses. A test validates it with an independent validator and checks it against the parser.
 */

const ref = (kind: 'schemas' | 'parameters' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` })
/** JSON of a TypeBox schema without its symbol keys. */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>

const rateLimitHeaders = {
  'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
  'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
  RateLimit: ref('headers', 'RateLimit'),
  'X-Request-Id': ref('headers', 'X-Request-Id'),
}

/** What any request may get before it reaches an operation: an unknown path, another method, a head too large. */
const frameResponses = {
  '404': ref('responses', 'NotFound'),
  '405': ref('responses', 'MethodNotAllowed'),
  '431': ref('responses', 'HeadersTooLarge'),
}

const errorResponses = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '402': ref('responses', 'ApiNotEnabled'),
  ...frameResponses,
  '429': ref('responses', 'TooManyRequests'),
  '500': ref('responses', 'Internal'),
  '503': ref('responses', 'DataUnavailable'),
}

/** The CORS preflight of an operation's path: no token, 204 (docs/api.md#browser-use-and-cors). */
const preflight = (operationId: string, tags: string[]) => ({
  operationId,
  tags,
  summary: 'CORS preflight',
  description: 'Answered 204 without a token, for any origin: GET and HEAD allowed, Authorization and X-Request-Id allowed as request headers.',
  security: [],
  responses: {
    '204': {
      description: 'The preflight answer.',
      headers: {
        'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin'),
        'Access-Control-Allow-Methods': ref('headers', 'Access-Control-Allow-Methods'),
        'Access-Control-Allow-Headers': ref('headers', 'Access-Control-Allow-Headers'),
        'X-Request-Id': ref('headers', 'X-Request-Id'),
      },
    },
    '431': ref('responses', 'HeadersTooLarge'),
  },
})

const filterParameters = [
  ref('parameters', 'from'), ref('parameters', 'to'), ...TICKET_FILTERS.map((filter) => ref('parameters', filter.parameter)),
  ref('parameters', 'changedAfter'),
]

/** A filter's parameter: repeatable, each value a non-empty string or one of its closed set. */
const filterParameter = (filter: (typeof TICKET_FILTERS)[number]) => ({
  name: filter.parameter, in: 'query', required: false, style: 'form', explode: true,
  description: filter.description,
  schema: { type: 'array', items: 'values' in filter ? { type: 'string', enum: [...filter.values] } : { type: 'string', minLength: 1 } },
})
/** The headers of a 200 of either ticket operation. */
const ticketHeaders = { ...rateLimitHeaders, [CHANGES_TOKEN_HEADER]: ref('headers', CHANGES_TOKEN_HEADER) }

const jsonError = (description: string, extraHeaders: Record<string, unknown> = {}, schema: unknown = ref('schemas', 'Error')) => ({
  description,
  headers: { 'X-Request-Id': ref('headers', 'X-Request-Id'), ...extraHeaders },
  content: { 'application/json': { schema } },
})

/**
 * A response header. `required` marks one that every response it is listed on carries; where
 * such a header is only sometimes sent (a 503 before the limits could be read), `optional` gives
 * an unmarked copy, since a $ref cannot be amended.
 */
const header = (description: string, schema: Record<string, unknown>, required = true) => ({ description, schema, ...(required ? { required: true } : {}) })

/** The limits the running server enforces, so that the document states them as configured. */
export interface DocumentedLimits {
  ratePerMinute: number
  demoPerDay: number
}

/** Unmarked copies of `names` from `headers`, plus the X-Request-Id every response carries. */
function optionalHeaders(names: string[], headers: Record<string, { required?: boolean }>): Record<string, unknown> {
  const copies: Record<string, unknown> = { 'X-Request-Id': ref('headers', 'X-Request-Id') }
  for (const name of names) {
    const { required: _required, ...copy } = headers[name]!
    copies[name] = copy
  }
  return copies
}

export function buildOpenApiDocument(limits: DocumentedLimits): Record<string, unknown> {
  const { ratePerMinute, demoPerDay } = limits
  const headers = documentedHeaders(limits)
  return {
    openapi: '3.1.0',
    info: {
      title: 'Queue analytics API',
      version: '1.0.0',
      description:
        "Read-only access to one organisation's locations, queues and tickets, for data warehouses, BI tools and dashboards. " +
        'Every request carries `Authorization: Bearer <API token>`; the organisation comes from the token. ' +
        `Rate limit: ${ratePerMinute} requests per token in any 60-second window; demo organisations also ${demoPerDay} requests per UTC day. ` +
        'Every operation also answers HEAD, exactly as GET without the body, counted alike. ' +
        'To download a CSV file without writing code, use the [export page](/).',
      // The project is not open source (package.json is private); SPDX's LicenseRef- form names such a licence.
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Queues', description: 'Locations and their queues: the ids to filter tickets by.' },
      { name: 'Tickets', description: 'Tickets by creation time, as JSON pages or one CSV file.' },
    ],
    security: [{ bearerAuth: [] }],
    paths: {
      '/v1/queues': {
        get: {
          operationId: 'listQueues',
          tags: ['Queues'],
          summary: 'Every location with its queues',
          description: 'Not filtered, not paginated; takes no query parameters (any is 400). Locations and queues are ordered by name, then id.',
          responses: {
            '200': { description: 'All locations and queues of the organisation.', headers: rateLimitHeaders, content: { 'application/json': { schema: ref('schemas', 'QueuesResponse') } } },
            ...errorResponses,
          },
        },
        options: preflight('preflightQueues', ['Queues']),
      },
      '/v1/tickets': {
        get: {
          operationId: 'listTickets',
          tags: ['Tickets'],
          summary: 'One page of tickets',
          description:
            'Keyset pagination ordered by createdAt, then id. Pass nextCursor as cursor with the same from, to and filters (changedAfter included) until nextCursor is null. ' +
            `To load incrementally, keep the ${CHANGES_TOKEN_HEADER} of the first response of a run and pass it as changedAfter in the next run.`,
          parameters: [...filterParameters, ref('parameters', 'cursor'), ref('parameters', 'limit')],
          responses: {
            '200': { description: 'A page of tickets.', headers: ticketHeaders, content: { 'application/json': { schema: ref('schemas', 'TicketPage') } } },
            ...errorResponses,
          },
        },
        options: preflight('preflightTickets', ['Tickets']),
      },
      '/v1/exports/tickets.csv': {
        get: {
          operationId: 'exportTicketsCsv',
          tags: ['Tickets'],
          summary: 'The whole range as one streamed CSV file',
          description:
            'Same filters and rules as /v1/tickets; cursor and limit are rejected (400). Streamed with chunked transfer encoding (gzip with Accept-Encoding: gzip). ' +
            `Header row: ${TICKET_FIELDS.join(',')}; demo organisations get a last column demo = 1. RFC 4180, CRLF, null as an empty field, no BOM. ` +
            'A failure after the first byte aborts the connection (a truncated transfer), never a file that looks complete.',
          parameters: filterParameters,
          responses: {
            '200': {
              description: 'The CSV file.',
              headers: {
                ...ticketHeaders,
                'Content-Disposition': ref('headers', 'Content-Disposition'),
                'X-Service-Demo': ref('headers', 'X-Service-Demo'),
              },
              content: { 'text/csv; charset=utf-8': { schema: { type: 'string', description: 'CSV text.' } } },
            },
            ...errorResponses,
          },
        },
        options: preflight('preflightExport', ['Tickets']),
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_ token', description: 'An API token created in the administration application (svc_ + 38 characters). Not accepted in the query string.' },
      },
      parameters: {
        from: {
          name: 'from', in: 'query', required: true,
          description:
            'Inclusive lower bound on createdAt. Either an RFC 3339 date-time with Z or an offset (2026-03-01T00:00:00Z, 2026-03-01T01:00:00.5+01:00) ' +
            'or a full date (2026-03-01, meaning 00:00:00.000Z). A date-time without an offset is rejected as ambiguous. At most 90 days before to.',
          schema: { type: 'string', examples: ['2026-03-01T00:00:00Z', '2026-03-01'] },
        },
        to: {
          name: 'to', in: 'query', required: true,
          description: 'Exclusive upper bound on createdAt, in the same forms as from (2026-03-31, 2026-03-31T00:00:00Z). to - from is at most 90 × 24 hours.',
          schema: { type: 'string', examples: ['2026-03-31', '2026-03-31T00:00:00Z'] },
        },
        ...Object.fromEntries(TICKET_FILTERS.map((filter) => [filter.parameter, filterParameter(filter)])),
        changedAfter: {
          name: 'changedAfter', in: 'query', required: false,
          description:
            `The ${CHANGES_TOKEN_HEADER} header of an earlier response, unchanged: of the rows from, to and the filters select, only those inserted or changed since that response read the data. ` +
            'Delivery is at least once (a ticket changed during a run may come again in the next one); deleted tickets are not reported. ' +
            'A token that is malformed, altered, of another organisation or of another history of the data (the data was recreated: load the range again without it), ' +
            'or data without change tracking (an operator runs admin migrate), is 400 with param changedAfter.',
          schema: { type: 'string' },
        },
        cursor: {
          name: 'cursor', in: 'query', required: false,
          description: 'The nextCursor of the previous page of the same query (same from/to instants and filter sets; limit may change). Anything else is 400 with param cursor.',
          schema: { type: 'string' },
        },
        limit: {
          name: 'limit', in: 'query', required: false,
          description: `Page size: a whole number from 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`,
          schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
        },
      },
      headers,
      responses: {
        BadRequest: jsonError('Invalid query parameters (param names the parameter), or a range longer than 90 days.', rateLimitHeaders),
        Unauthorized: jsonError('Token missing, malformed, unknown or revoked.', { 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') }),
        ApiNotEnabled: jsonError('The token is valid but the organisation does not have the API feature; the window is shown, nothing counted.', rateLimitHeaders),
        TooManyRequests: jsonError('Rate limit exceeded (rate_limited), a demo organisation over its daily quota (demo_quota_exceeded), or, for the CSV export, as many exports of this token or of the server running as may run at once (too_many_exports); none of them counts.', { ...rateLimitHeaders, 'Retry-After': ref('headers', 'Retry-After') }, {
          oneOf: [ref('schemas', 'RateLimited'), ref('schemas', 'DemoQuotaExceeded'), ref('schemas', 'TooManyExports')],
        }),
        NotFound: jsonError('No such path (not_found). Paths match exactly, as sent: a trailing slash, a dot segment, a backslash or an encoded slash makes another, unknown, path. No token needed; nothing counted.'),
        MethodNotAllowed: jsonError('A method other than GET, HEAD or the OPTIONS preflight (method_not_allowed). No token needed; nothing counted.', { Allow: ref('headers', 'Allow') }),
        HeadersTooLarge: jsonError('The request line and headers together exceed 16 KiB (headers_too_large); nothing counted. Past 64 KiB the server closes the connection after a bare 431 without this body.'),
        Internal: jsonError('An unexpected error; the body says nothing internal.'),
        DataUnavailable: jsonError(
          "data_unavailable: the organisation's data cannot be read right now (missing, unreadable or unknown-version tenant file). " +
            'limits_unavailable: the rate limits cannot be checked right now, so nothing was served; retry after Retry-After (1 second). ' +
            'copy_behind: this replica\'s copy has not yet reached the point changedAfter or cursor names; retry the same request after Retry-After (1 second). ' +
            'The rate-limit headers are sent when the limits could be read, Retry-After with limits_unavailable and copy_behind.',
          optionalHeaders(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit', 'Retry-After'], headers),
        ),
      },
      schemas: {
        Ticket: plain(TicketSchema),
        TicketPage: { ...plain(TicketPageSchema), properties: { ...(plain(TicketPageSchema).properties as object), items: { type: 'array', items: ref('schemas', 'Ticket') } } },
        Queue: plain(QueueSchema),
        Location: { ...plain(LocationSchema), properties: { ...(plain(LocationSchema).properties as object), queues: { type: 'array', items: ref('schemas', 'Queue') } } },
        QueuesResponse: { ...plain(QueuesResponseSchema), properties: { locations: { type: 'array', items: ref('schemas', 'Location') } } },
        Error: plain(ErrorSchema),
        RateLimited: plain(RateLimitedSchema),
        TooManyExports: plain(TooManyExportsSchema),
        DemoQuotaExceeded: plain(DemoQuotaSchema),
      },
    },
  }
}

/** The response headers of the document; `required` on those always sent where they are listed. */
function documentedHeaders({ ratePerMinute, demoPerDay }: DocumentedLimits): Record<string, ReturnType<typeof header>> {
  return {
    'X-RateLimit-Limit': header(`Size of the per-token sliding window: ${ratePerMinute} requests per 60 s.`, { type: 'integer', examples: [ratePerMinute] }),
    'X-RateLimit-Remaining': header('Requests left in the window after this one.', { type: 'integer', minimum: 0 }),
    'X-RateLimit-Reset': header('Whole seconds, rounded up, until the window is fully restored; 0 when empty.', { type: 'integer', minimum: 0 }),
    'RateLimit-Policy': header(`IETF draft form of the policy: "minute";q=${ratePerMinute};w=60, plus "day";q=${demoPerDay};w=86400 for demo organisations.`, { type: 'string' }),
    RateLimit: header('IETF draft form of the state: "minute";r=<remaining>;t=<reset>, plus a "day" item for demo organisations.', { type: 'string' }),
    'Retry-After': header('Whole seconds (at least 1) until a request will be accepted; for demo_quota_exceeded, until resetAt.', { type: 'integer', minimum: 1 }),
    'X-Request-Id': header('Identifies the request in the logs; also in every error body.', { type: 'string' }),
    'Content-Disposition': header('attachment; filename="tickets_<from>_<to>.csv" with instants as YYYYMMDDTHHMMSSZ; demo organisations: demo-tickets_….', { type: 'string' }),
    'X-Service-Demo': header('1 for a demo organisation; absent for paid ones.', { type: 'string', enum: ['1'] }, false),
    [CHANGES_TOKEN_HEADER]: header(
      'Opaque changes token: pass it as changedAfter in a later request to receive the tickets inserted or changed since this response read the data. ' +
        'Sent on every 200 of the ticket operations once the organisation\'s data records its changes.',
      { type: 'string' },
      false,
    ),
    'WWW-Authenticate': header('Bearer challenge; error="invalid_token" when a token was given.', { type: 'string' }),
    Allow: header('The methods the path answers: GET, HEAD.', { type: 'string', enum: ['GET, HEAD'] }),
    'Access-Control-Allow-Origin': header('Any origin: bearer tokens are not ambient credentials.', { type: 'string', enum: ['*'] }),
    'Access-Control-Allow-Methods': header('The methods a browser may use.', { type: 'string' }),
    'Access-Control-Allow-Headers': header('The request headers a browser may send: Authorization, X-Request-Id.', { type: 'string' }),
  }
}
