import { changesFloor, type ChangesTokenCodec } from '../changes/token.ts'
import { readChangeWindow } from '../changes/window.ts'
import { CHANGES_TOKEN_HEADER } from '../contract/vocabulary.ts'
import type { Logger } from '../logger.ts'
import type { AdmittedContext } from '../http/context.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { exportFileName } from '../contract/instant.ts'
import { parseTicketQuery } from '../tickets/query.ts'
import type { TicketQueries } from '../tickets/repository.ts'
import { checkServedSelection } from '../tenant/served-rows.ts'
import { acceptsGzip } from './accept-encoding.ts'
import { createCsvExportStream } from './csv-stream.ts'
import { noMetrics, type ExportProgress, type MetricsRecorder } from '../metrics/recorder.ts'
import type { IdleTimeout } from '../http/idle-timeout.ts'

export interface ExportDeps {
  pool: TenantPool
  tickets: TicketQueries
  changes: ChangesTokenCodec
  stallTimeoutMs: number
  /** The HTTP server's idle timeout, lifted while an export streams: its stall rule is `stallTimeoutMs`. */
  idleTimeout?: IdleTimeout
  logger: Logger
  /** Told when an export starts streaming, each chunk it writes, and when it ends. @default noMetrics */
  metrics?: MetricsRecorder
  /** Aborted when the server's shutdown drain runs out: exports still streaming end `shutdown`. */
  shutdown?: AbortSignal
}

/**
 * GET /v1/exports/tickets.csv: every check (query, changedAfter, tenant file, the statement and
 * its first row) happens before the response starts; then the CSV streams, gzip-compressed on
 * the fly when the client accepts it. The X-Changes-Token and the rows are read in one read
 * snapshot (docs/api.md#loading-incrementally), which the stream closes when it ends.
 */
export function exportHandler(deps: ExportDeps) {
  const metrics = deps.metrics ?? noMetrics
  return (context: AdmittedContext): Response => {
    const { caller, params, request, id: requestId } = context
    const query = parseTicketQuery(params, 'export')
    const since = query.changedAfter === null ? null : deps.changes.decode(caller.organisationId, query.changedAfter)
    const floor = changesFloor(deps.changes, caller.organisationId, request)
    // A connection of its own: the export's snapshot must not hold back the organisation's pages.
    const snapshot = deps.pool.openSnapshot(caller.organisationId, { requestId, own: true })
    const window = snapshot.read((lease) => readChangeWindow(lease, deps.changes, since, [floor]))
    const select = deps.tickets.exportQuery(query, window.sinceVersion)
    // Before the first byte, in the rows' snapshot: a bad row must be a 503, not a broken file.
    snapshot.read((lease) => checkServedSelection(lease, select))
    const startedAt = performance.now()
    // Made once the stream exists (below); a stream that fails before that was never counted.
    let progress: ExportProgress | undefined
    let bodyEnded!: () => void
    const ended = new Promise<void>((resolve) => (bodyEnded = resolve))
    const csv = createCsvExportStream({
      snapshot,
      select,
      demo: caller.demo,
      stallTimeoutMs: deps.stallTimeoutMs,
      shutdown: deps.shutdown,
      // Counting a chunk's UTF-8 bytes is work of its own: only when metrics are on.
      onChunk: metrics === noMetrics ? undefined : (rows, bytes) => progress?.wrote(rows, bytes),
      onEnd: (outcome, stats) => {
        const fields = {
          requestId,
          organisationId: caller.organisationId,
          outcome,
          rows: stats.rows,
          chars: stats.chars,
          durationMs: Math.round(performance.now() - startedAt),
        }
        // Before the stream closes (onEnd runs first), however it ended: a connection kept alive
        // afterwards (after a whole file, or a HEAD whose body was never read) is closed when idle again.
        deps.idleTimeout?.restore(request)
        if (outcome === 'failed') deps.logger.error('export_failed', { ...fields, error: String(stats.error) })
        else deps.logger.info('export_ended', fields)
        progress?.ended()
        bodyEnded()
      },
    })
    // The stall rule is ours (the watchdog, after stallTimeoutMs without progress), not the
    // server's idle timeout, which would cut a reader that pauses for a few seconds.
    deps.idleTimeout?.lift(request)
    // Only now that the stream exists (it ends, and calls onEnd, whatever happens): the pipeline
    // counts the request in flight until then, so shutdown waits for running exports.
    context.bodyEnded = ended
    progress = metrics.exportStarted()
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
