import { SignedValueCodec, type SignedValueKind } from '../crypto/signed-value.ts'
import { invalidParam } from '../errors/api-error.ts'
import { TICKET_FILTERS } from '../contract/vocabulary.ts'
import type { ChangesPosition } from '../changes/token.ts'
import type { ParsedTicketQuery } from './query.ts'

/**
 * Position of the last row of a page: the keyset (createdAt, id), and the point of the file's
 * change history the page was read at (null for a file without change tracking, or a cursor
 * made before cursors carried it), so that a replica's copy that lags behind it answers 503
 * rather than a page that leaves rows out.
 */
export interface CursorPosition {
  createdAt: string
  id: string
  reached?: ChangesPosition | null
}

/**
 * A longer cursor is refused before anything is decoded: it fits the 16 KiB request line
 * (http/request-head.ts) with room to spare, and still holds the cursor of a ticket id of up to
 * about 8,900 bytes, so that a next page's cursor is never refused.
 */
const MAX_CURSOR_LENGTH = 12_000

/**
 * Opaque pagination cursors: `base64url(position) . base64url(HMAC)`, a signed value
 * (crypto/signed-value.ts). The HMAC covers the organisation, a fingerprint of the query (the
 * instants of from and to, the sets of filter values and changedAfter; not the limit, which may
 * change between pages) and the position. A cursor of another query or organisation, or one
 * that was altered, fails the check and is answered 400.
 */
export class CursorCodec {
  private readonly codec: SignedValueCodec

  /**
   * `carryReached`: cursors name the point of history their page was read at. Replicas
   * (READ_ONLY=1) set it, so that another replica lagging behind answers 503; a writer does not,
   * so that its cursors stay the two-field ones every earlier release reads (a rollback keeps
   * walks in progress going). Either way, both forms are read.
   */
  constructor(signingKey: string, private readonly options: { carryReached?: boolean } = {}) {
    this.codec = new SignedValueCodec(signingKey)
  }

  encode(organisationId: string, query: ParsedTicketQuery, position: CursorPosition): string {
    const { createdAt, id } = position
    const reached = this.options.carryReached ? position.reached : null
    return this.codec.encode(cursorKind(organisationId, query), reached ? [createdAt, id, reached.historyId, reached.version] : [createdAt, id])
  }

  /** The position carried by `cursor`; throws 400 `param: cursor` unless it belongs to this query. */
  decode(organisationId: string, query: ParsedTicketQuery, cursor: string): CursorPosition {
    const decoded = this.codec.decode(cursorKind(organisationId, query), cursor)
    // A signed payload that does not parse is still not a cursor of ours.
    if (!decoded.ok || !isPosition(decoded.fields)) throw invalidCursor()
    const [createdAt, id, historyId, version] = decoded.fields
    return historyId === undefined ? { createdAt, id } : { createdAt, id, reached: { historyId, version: version! } }
  }
}

/** The filters every cursor has carried in place since the first release, given or not. */
const FILTERS_IN_PLACE = 3

/** A cursor is signed for one organisation and one query. */
function cursorKind(organisationId: string, query: ParsedTicketQuery): SignedValueKind {
  return {
    maxLength: MAX_CURSOR_LENGTH,
    signedText: (payload) => {
      const [always, whenGiven] = [TICKET_FILTERS.slice(0, FILTERS_IN_PLACE), TICKET_FILTERS.slice(FILTERS_IN_PLACE)]
      const fingerprint: unknown[] = [1, organisationId, query.fromMs, query.toMs, ...always.map((filter) => query.filters[filter.parameter]), payload]
      // changedAfter and any later filter are bound like the first ones, appended only when given,
      // so that the cursors of queries without them stay what they were.
      if (query.changedAfter !== null) fingerprint.push(query.changedAfter)
      for (const filter of whenGiven) {
        const values: readonly string[] = query.filters[filter.parameter]
        if (values.length > 0) fingerprint.push([filter.parameter, values])
      }
      return JSON.stringify(fingerprint)
    },
  }
}

function isPosition(fields: unknown): fields is [string, string] | [string, string, string, number] {
  if (!Array.isArray(fields) || typeof fields[0] !== 'string' || typeof fields[1] !== 'string') return false
  return fields.length === 2 || (fields.length === 4 && typeof fields[2] === 'string' && Number.isSafeInteger(fields[3]) && fields[3] >= 0)
}

function invalidCursor() {
  return invalidParam('cursor', `Parameter 'cursor' is not a nextCursor of this query; keep from, to and the filters of the first page, or start again without a cursor.`)
}
