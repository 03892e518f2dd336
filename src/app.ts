import type { Server } from 'bun'
import type { Config } from './config/config.ts'
import { systemClock, type Clock } from './clock.ts'
import type { Logger } from './logger.ts'
import { ControlStore } from './control/store.ts'
import { LastUsedRecorder, notRecorded } from './control/last-used.ts'
import { TenantPool } from './tenant/pool.ts'
import type { Limits } from './limits/types.ts'
import { createLimits } from './limits/index.ts'
import { CursorCodec } from './tickets/cursor.ts'
import { TicketQueries } from './tickets/repository.ts'
import { ChangesTokenCodec } from './changes/token.ts'
import { createGate } from './admission/gate.ts'
import { probeLimits } from './admission/limits-probe.ts'
import http from 'node:http'
import { createPipeline, type RequestObserver } from './http/pipeline.ts'
import { PARSER_HEAD_LIMIT_BYTES } from './http/request-head.ts'
import { lastResortResponse } from './http/error-response.ts'
import { accessLog } from './http/access-log.ts'
import { systemRoutes } from './http/system-routes.ts'
import { webRoutes } from './web/routes.ts'
import { queuesHandler } from './queues/handler.ts'
import { ticketsHandler } from './tickets/handler.ts'
import { exportHandler } from './export/handler.ts'
import { noMetrics, type MetricsRecorder } from './metrics/recorder.ts'
import { metricsObserver } from './metrics/observer.ts'
import { DEFAULT_IDLE_TIMEOUT_SECONDS, serverIdleTimeout } from './http/idle-timeout.ts'
import { drainable } from './server/drain.ts'
import { copyHealth } from './replica/copy-state.ts'
import { admittedOnce, answeredOnce, type PipelineLayer } from './http/layers-off.ts'

export interface AppDeps {
  config: Config
  logger: Logger
  clock?: Clock
  /**
   * Where the minute window and the demo quota live, built on the app's control store.
   * @default in Redis when `config.redisUrl` is set; otherwise the embedded default: the window
   * in memory, the quota in control.sqlite
   */
  limits?: (store: ControlStore, clock: Clock) => Limits
  /**
   * Told about every answered request after the access log (see http/pipeline.ts): where
   * metrics and the like hook in.
   * @default none
   */
  observers?: readonly RequestObserver[]
  /**
   * Where the service's metrics go (docs/operations.md#metrics): every answered request, the
   * exports, the limits, the tenant pool.
   * @default nowhere (metrics off)
   */
  metrics?: MetricsRecorder
  /** How often the limits' backend is checked with no request asking. @default LIMITS_PROBE_EVERY_MS (5 s) */
  limitsProbeEveryMs?: number
  /**
   * Layers of the request path switched off, for the benchmark's accounting of what each costs
   * (http/layers-off.ts, bench/scenarios/layers.ts); the service never sets it.
   * @default none
   */
  layersOff?: readonly PipelineLayer[]
}

export interface App {
  /** Answers one request; what the HTTP server calls. */
  fetch(request: Request): Promise<Response>
  /**
   * Starts serving on `port` (0 picks a free port) and the configured host; with `reusePort`,
   * other processes may listen on the same port (the workers of WORKERS=N). `idleTimeoutSeconds`
   * (Bun's idle timeout, default 10) is for tests that must outlast it without waiting 10 s.
   */
  listen(port?: number, options?: { reusePort?: boolean; idleTimeoutSeconds?: number }): Server<undefined>
  /**
   * Drains (server/drain.ts: `Connection: close` on every answer, still accepting for
   * `handoverMs`, default 0), waits up to `drainMs` for in-flight requests and exports, then
   * closes everything.
   */
  close(drainMs?: number, options?: { handoverMs?: number }): Promise<void>
  readonly store: ControlStore
  readonly pool: TenantPool
  readonly limits: Limits
  /** Requests being answered plus exports still streaming. */
  inFlight(): number
}

/** The composition root: builds the whole service from a config, a logger, a clock and the limits. */
export function createApp(deps: AppDeps): App {
  const { config, logger } = deps
  const clock = deps.clock ?? systemClock
  // Writes wait only briefly for another process's lock; the demo quota retries without blocking.
  const store = new ControlStore(config.dataDir, { busyTimeoutMs: 20, readOnly: config.readOnly })
  const metrics = deps.metrics ?? noMetrics
  const pool = new TenantPool({ dataDir: config.dataDir, maxOpen: config.tenantCacheSize, logger, onOpen: () => metrics.tenantOpened(), readOnly: config.readOnly })
  metrics.observeTenantPool(() => pool.stats().open)
  const limits = deps.limits ? deps.limits(store, clock) : createLimits(config, { store, clock })
  // A read-only copy keeps no last-used times: the writer's file is the one the admin CLI reads.
  const lastUsed = config.readOnly ? notRecorded : new LastUsedRecorder(store, (error) => logger.warn('last_used_flush_failed', { error: String(error) }))
  const cursors = new CursorCodec(store.cursorSigningKey(), { carryReached: config.readOnly })
  // One key signs both; each signs under its own tag (see crypto/signed-value.ts).
  const changes = new ChangesTokenCodec(store.cursorSigningKey())
  const tickets = new TicketQueries()
  const gate = createGate({
    lookupToken: (hash) => store.lookupToken(hash),
    ...limits,
    clock,
    lastUsed,
    logger,
    onLimitsState: (up) => metrics.limitsBackendUp(up),
  })

  const stopProbe = probeLimits(gate, deps.limitsProbeEveryMs)

  let server: Server<undefined> | undefined
  // Aborted when the shutdown's drain ends with exports still running: they end as `shutdown`.
  const shutdown = new AbortController()
  let idleTimeoutSeconds = DEFAULT_IDLE_TIMEOUT_SECONDS
  const off = new Set(deps.layersOff)
  const observers = [
    ...(off.has('access-log') ? [] : [accessLog(logger)]),
    ...(deps.metrics && !off.has('metrics') ? [metricsObserver(deps.metrics)] : []),
    ...(deps.observers ?? []),
  ]
  const ticketPages = ticketsHandler(pool, tickets, cursors, changes)
  const pipeline = createPipeline({
    logger,
    observers,
    gate: off.has('gate') ? admittedOnce(gate) : gate,
    layersOff: off,
    routes: [
      ...systemRoutes({
        store,
        limitsReady: () => gate.limitsReady(),
        // A replica's copy (replica/copy-state.ts); a read-only mount without one has no age.
        ...(config.readOnly ? { copy: () => copyHealth(config.dataDir, clock.now()), maxCopyAgeSeconds: config.replicaMaxAgeS } : {}),
      }),
      ...webRoutes({ ratePerMinute: config.rateLimitPerMinute, demoPerDay: config.demoDailyQuota }),
      { path: '/v1/queues', admitted: queuesHandler(pool, changes) },
      { path: '/v1/tickets', admitted: off.has('query') ? answeredOnce(ticketPages) : ticketPages },
      {
        path: '/v1/exports/tickets.csv',
        admitted: exportHandler({
          pool,
          tickets,
          changes,
          stallTimeoutMs: config.exportStallTimeoutMs,
          idleTimeout: serverIdleTimeout(() => server, () => idleTimeoutSeconds),
          logger,
          metrics,
          shutdown: shutdown.signal,
        }),
        exportSlots: limits.exportSlots,
      },
    ],
  })

  const inFlight = () => pipeline.active()
  const served = drainable()

  return {
    fetch: pipeline.fetch,
    store,
    pool,
    limits,
    inFlight,
    listen(port = config.port, options = {}) {
      // Bun's parser answers a head over its limit with a bare 431 before the pipeline sees it;
      // raised here so that the pipeline's lower limit answers with the JSON body (http/request-head.ts).
      if (http.maxHeaderSize < PARSER_HEAD_LIMIT_BYTES) Object.assign(http, { maxHeaderSize: PARSER_HEAD_LIMIT_BYTES })
      idleTimeoutSeconds = options.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS
      server = Bun.serve({
        port,
        hostname: config.host,
        // Matched on the request target as sent; anything else, whatever it resolves to, is unknown.
        // Each answer goes through the drain, which adds `Connection: close` once it has begun.
        routes: Object.fromEntries(Object.entries(pipeline.serveRoutes).map(([path, answer]) => [path, served.wrap(answer)])),
        fetch: served.wrap(pipeline.unrouted),
        // The pipeline answers every request itself; this is only the net under it.
        error: (error) => lastResortResponse(error, logger),
        development: false,
        // Bun sets SO_REUSEPORT unless told not to (http/port-in-use.ts); only the workers share on purpose.
        reusePort: options.reusePort ?? false,
        idleTimeout: idleTimeoutSeconds,
      })
      return server
    },
    async close(drainMs = config.shutdownDrainMs, { handoverMs = 0 } = {}) {
      if (server) await served.drain(server, { drainMs, handoverMs, inFlight, onDeadline: () => shutdown.abort() })
      lastUsed.stop()
      await stopProbe()
      await Promise.allSettled([limits.limiter.close(), limits.quota.close()])
      pool.close()
      store.close()
    },
  }
}
