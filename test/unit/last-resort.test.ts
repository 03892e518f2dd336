import { expect, test } from 'bun:test'
import { lastResortResponse } from '../../src/http/error-response.ts'
import { memoryLogger } from '../../src/logger.ts'

test("Bun.serve's error handler: an error that escapes the handler is the JSON 500 with a request id, logged with it", async () => {
  const logger = memoryLogger('debug')
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    development: false,
    fetch: () => {
      throw new Error('escaped /secret/path')
    },
    error: (error) => lastResortResponse(error, logger),
  })
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/queues`)
    const body = (await response.json()) as Record<string, unknown>
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(body).toMatchObject({ error: 'internal', requestId: response.headers.get('x-request-id') })
    expect(JSON.stringify(body)).not.toContain('/secret/path')
    const lines = logger.lines.map((line) => JSON.parse(line)).filter((line) => line.requestId === body.requestId)
    expect(lines.map((line) => line.event)).toEqual(['unhandled_error', 'request'])
  } finally {
    await server.stop(true)
  }
})
