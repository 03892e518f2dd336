import { sameSignature, signatureOf } from '../crypto/signature.ts'
import { invalidParam } from '../errors/api-error.ts'
import type { TicketQuery } from './query.ts'

/** Position of the last row of a page: the keyset (createdAt, id). */
export interface CursorPosition {
  createdAt: string
  id: string
}

/**
 * Opaque pagination cursors: `base64url(position) . base64url(HMAC)`. The HMAC covers the
 * organisation, a fingerprint of the query (the instants of from and to, the sets of filter
 * values and changedAfter; not the limit, which may change between pages) and the position.
 * A cursor of another query or organisation, or one that was altered, fails the check and is
 * answered 400.
 */
export class CursorCodec {
  constructor(private readonly signingKey: string) {}

  encode(organisationId: string, query: TicketQuery, position: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url')
    return `${payload}.${this.sign(organisationId, query, payload)}`
  }

  /** The position carried by `cursor`; throws 400 `param: cursor` unless it belongs to this query. */
  decode(organisationId: string, query: TicketQuery, cursor: string): CursorPosition {
    const dot = cursor.indexOf('.')
    const payload = cursor.slice(0, dot)
    const signature = cursor.slice(dot + 1)
    if (dot <= 0 || !sameSignature(signature, this.sign(organisationId, query, payload))) throw invalidCursor()
    try {
      const position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown
      if (Array.isArray(position) && position.length === 2 && typeof position[0] === 'string' && typeof position[1] === 'string') {
        return { createdAt: position[0], id: position[1] }
      }
    } catch {
      // fall through: a signed payload that does not parse is still not a cursor of ours
    }
    throw invalidCursor()
  }

  private sign(organisationId: string, query: TicketQuery, payload: string): string {
    const fingerprint = [1, organisationId, query.fromMs, query.toMs, query.queueIds, query.locationIds, query.statuses, payload]
    // changedAfter is bound like any filter. Appended only when given, so that the cursors of
    // queries without it stay what they were.
    if (query.changedAfter !== null) fingerprint.push(query.changedAfter)
    return signatureOf(this.signingKey, JSON.stringify(fingerprint))
  }
}

function invalidCursor() {
  return invalidParam('cursor', `Parameter 'cursor' is not a nextCursor of this query; keep from, to and the filters of the first page, or start again without a cursor.`)
}
