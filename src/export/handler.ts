import { SQLiteError } from 'bun:sqlite'
import type { Caller } from '../admission/caller.ts'
import type { ChangesTokenCodec } from '../changes/token.ts'
import { readChangeWindow, type ChangeWindow } from '../changes/window.ts'
import { CHANGES_TOKEN_HEADER } from '../contract/vocabulary.ts'
import type { Logger } from '../logger.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { beginSnapshot, endSnapshot } from '../tenant/read.ts'
import { exportFileName } from '../contract/instant.ts'
import { parseTicketQuery } from '../tickets/query.ts'
import { acceptsGzip } from './accept-encoding.ts'
import { requestInfo } from '../http/request-info.ts'
import { createCsvExportStream, type ExportOutcome } from './csv-stream.ts'

export interface ExportDeps {
  pool: TenantPool
  changes: ChangesTokenCodec
  stallTimeoutMs: number
  logger: Logger
  /** Told when an export starts and ends, so shutdown can wait for running ones. */
  onStart?: () => void
  onEnd?: (outcome: ExportOutcome, seconds: number) => void
  /** Told after each chunk of CSV: its rows and bytes. */
  onChunk?: (rows: number, bytes: number) => void
}

/**
 * GET /v1/exports/tickets.csv: every check (query, changedAfter, tenant file, the statement and
 * its first row) happens before the response starts; then the CSV streams, gzip-compressed on
 * the fly when the client accepts it. The X-Changes-Token and the rows are read in one read
 * transaction (docs/api.md#loading-incrementally), which the stream ends with its statement.
 */
export function exportHandler(deps: ExportDeps) {
  return (caller: Caller, params: URLSearchParams, request: Request, requestId: string): Response => {
    const query = parseTicketQuery(params, 'export')
    const since = query.changedAfter === null ? null : deps.changes.decode(caller.organisationId, query.changedAfter)
    // A connection of its own: the export's snapshot must not hold back the organisation's pages.
    const lease = deps.pool.acquireOwn(caller.organisationId)
    let window: ChangeWindow
    try {
      beginSnapshot(lease)
      window = readChangeWindow(lease, deps.changes, since)
    } catch (error) {
      endSnapshot(lease)
      lease.release()
      throw error instanceof SQLiteError ? lease.fail(error) : error
    }
    const startedAt = performance.now()
    const csv = createCsvExportStream({
      lease,
      query,
      sinceVersion: window.sinceVersion,
      demo: caller.demo,
      stallTimeoutMs: deps.stallTimeoutMs,
      onChunk: deps.onChunk,
      onEnd: (outcome, stats) => {
        const fields = {
          requestId,
          organisationId: caller.organisationId,
          outcome,
          rows: stats.rows,
          chars: stats.chars,
          durationMs: Math.round(performance.now() - startedAt),
        }
        if (outcome === 'failed') deps.logger.error('export_failed', { ...fields, error: String(stats.error) })
        else deps.logger.info('export_ended', fields)
        deps.onEnd?.(outcome, (performance.now() - requestInfo(request).startedAt) / 1000)
      },
    })
    deps.onStart?.()
    const headers: Record<string, string> = {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${exportFileName(query.fromMs, query.toMs, caller.demo)}"`,
      Vary: 'Accept-Encoding',
    }
    if (caller.demo) headers['X-Service-Demo'] = '1'
    if (window.token !== null) headers[CHANGES_TOKEN_HEADER] = window.token
    if (acceptsGzip(request.headers.get('accept-encoding'))) {
      headers['Content-Encoding'] = 'gzip'
      const gzip = new CompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, string>
      return new Response(csv.pipeThrough(gzip), { headers })
    }
    return new Response(csv, { headers })
  }
}
