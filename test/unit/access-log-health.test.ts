import { expect, test } from 'bun:test'
import { memoryLogger } from '../../src/logger.ts'
import { accessLog } from '../../src/http/access-log.ts'
import { createRequestContext } from '../../src/http/context.ts'

/** A balancer's health checks do not fill the access log at info (docs/operations.md#access-log). */
function logged(path: string, status: number): { level: string; path: string }[] {
  const logger = memoryLogger('debug')
  const context = createRequestContext(new Request(`http://x${path}`))
  accessLog(logger)({ context, response: new Response(null, { status }), route: path, durationMs: 1 })
  return logger.lines.map((line) => JSON.parse(line))
}

test('/readyz and /healthz answered 200 are logged at debug; a failed check and every other request at info', () => {
  expect(logged('/readyz', 200)).toMatchObject([{ level: 'debug', path: '/readyz' }])
  expect(logged('/healthz', 200)).toMatchObject([{ level: 'debug', path: '/healthz' }])
  expect(logged('/readyz', 503)).toMatchObject([{ level: 'info', path: '/readyz' }])
  expect(logged('/v1/queues', 200)).toMatchObject([{ level: 'info', path: '/v1/queues' }])
  expect(logged('/readyz/', 404)).toMatchObject([{ level: 'info' }])
})
