import { Elysia } from 'elysia'
import type { Server } from 'bun'
import type { Config } from './config/config.ts'
import { systemClock, type Clock } from './clock.ts'
import type { Logger } from './logger.ts'
import { ControlStore } from './control/store.ts'
import { TenantPool } from './tenant/pool.ts'
import { SlidingWindowLimiter } from './limits/sliding-window.ts'
import { StoredDemoQuota } from './limits/demo-quota.ts'
import { LastUsedRecorder } from './auth/authenticate.ts'
import { CursorCodec } from './tickets/cursor.ts'
import { createGate } from './http/gate.ts'
import { ApiError } from './http/errors.ts'
import { errorResponse, notFound, toApiError } from './http/error-response.ts'
import { beginRequest, requestInfo } from './http/request-info.ts'
import { decorateResponse, preflightResponse } from './http/response-headers.ts'
import { systemRoutes } from './http/system-routes.ts'
import { webRoutes } from './web/routes.ts'
import { v1Routes } from './http/v1-routes.ts'
import { queuesHandler } from './queues/routes.ts'
import { ticketsHandler } from './tickets/routes.ts'
import { exportHandler } from './export/routes.ts'
import { redactQuery } from './http/access-log.ts'

export interface AppDeps {
  config: Config
  logger: Logger
  clock?: Clock
}

export interface App {
  /** Answers one request; what the HTTP server calls. */
  fetch(request: Request): Promise<Response>
  /** Starts serving on `port` (0 picks a free port) and the configured host. */
  listen(port?: number): Server<undefined>
  /** Stops accepting, waits up to `drainMs` for in-flight requests and exports, then closes everything. */
  close(drainMs?: number): Promise<void>
  readonly store: ControlStore
  readonly pool: TenantPool
  readonly limiter: SlidingWindowLimiter
  /** Requests being answered plus exports still streaming. */
  inFlight(): number
}

const WINDOW_SECONDS = 60

/** The composition root: builds the whole service from a config, a logger and a clock. */
export function createApp(deps: AppDeps): App {
  const { config, logger } = deps
  const clock = deps.clock ?? systemClock
  // Writes wait only briefly for another process's lock; the demo quota retries without blocking.
  const store = new ControlStore(config.dataDir, { busyTimeoutMs: 20 })
  const pool = new TenantPool({ dataDir: config.dataDir, maxOpen: config.tenantCacheSize, logger })
  const limiter = new SlidingWindowLimiter(config.rateLimitPerMinute, WINDOW_SECONDS * 1000)
  const quota = new StoredDemoQuota(store, config.demoDailyQuota)
  const lastUsed = new LastUsedRecorder(store, (error) => logger.warn('last_used_flush_failed', { error: String(error) }))
  const cursors = new CursorCodec(store.cursorSigningKey())
  let activeRequests = 0
  let activeExports = 0

  // Elysia finds the path by searching for '/' from index 11 by default, assuming a host of at
  // least 4 characters: a proxy's `Host: api` would turn /v1/queues into a 404. Bun.serve here is
  // plain HTTP (TLS ends at a proxy), so searching from after "http://" is exact.
  const elysia = new Elysia({ handler: { standardHostname: false } })
    .onError(({ error, request }) => {
      const { id } = requestInfo(request)
      return errorResponse(toApiError(error, logger, id), id)
    })
    .use(systemRoutes(store))
    .use(webRoutes())
    .use(
      v1Routes({
        admit: createGate({ store, limiter, windowSeconds: WINDOW_SECONDS, quota, clock, lastUsed }),
        queues: queuesHandler(pool),
        tickets: ticketsHandler(pool, cursors),
        exportCsv: exportHandler({
          pool,
          stallTimeoutMs: config.exportStallTimeoutMs,
          logger,
          onStart: () => activeExports++,
          onEnd: () => activeExports--,
        }),
      }),
    )

  const knownPaths = new Set(elysia.routes.map((route) => route.path))
  const handle = elysia.fetch

  async function route(request: Request, path: string, requestId: string): Promise<Response> {
    const known = knownPaths.has(path)
    if (request.method === 'GET') return handle(request)
    if (request.method === 'OPTIONS' && known) return preflightResponse()
    if (!known) return errorResponse(notFound(), requestId)
    return errorResponse(
      new ApiError('method_not_allowed', `Only GET is allowed on ${path}.`, {}, { Allow: 'GET' }),
      requestId,
    )
  }

  async function fetch(request: Request): Promise<Response> {
    const info = beginRequest(request)
    activeRequests++
    const url = new URL(request.url)
    let response: Response
    try {
      response = await route(request, url.pathname, info.id)
    } catch (error) {
      response = errorResponse(toApiError(error, logger, info.id), info.id)
    } finally {
      activeRequests--
    }
    decorateResponse(response, info.id, url.pathname.startsWith('/v1/'))
    logger.info('request', {
      requestId: info.id,
      method: request.method,
      path: url.pathname,
      query: redactQuery(url.search),
      status: response.status,
      durationMs: Math.round((performance.now() - info.startedAt) * 100) / 100,
      organisationId: info.organisationId,
      tokenId: info.tokenId,
    })
    return response
  }

  let server: Server<undefined> | undefined

  return {
    fetch,
    store,
    pool,
    limiter,
    inFlight: () => activeRequests + activeExports,
    listen(port = config.port) {
      // Without reusePort: false, Bun in production mode sets SO_REUSEPORT and a second server
      // started on this port would share it instead of failing (see http/port-in-use.ts).
      server = Bun.serve({ port, hostname: config.host, fetch, development: false, reusePort: false })
      return server
    },
    async close(drainMs = config.shutdownDrainMs) {
      if (server) {
        void server.stop(false) // stop accepting; in-flight requests go on
        const deadline = Date.now() + drainMs
        while (activeRequests + activeExports > 0 && Date.now() < deadline) await Bun.sleep(20)
        await server.stop(true)
      }
      lastUsed.stop()
      pool.close()
      store.close()
    },
  }
}
