import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startServer, tempDataDir, type TestServer } from '../support/harness.ts'

/**
 * The client depends on nothing but `fetch`: the bundle `npm install` builds (`build:client`)
 * is imported by plain Node, which pages, splits windows and throws typed errors like Bun does.
 */
let server: TestServer
let token: string
const temp = tempDataDir()

beforeAll(async () => {
  server = await startServer()
  token = server.seeded().token
})
afterAll(async () => {
  await server.close()
  temp.cleanup()
})

test('the built client runs unchanged in Node', async () => {
  const build = Bun.spawnSync(['npm', 'run', '-s', 'build:client', '--', `--outfile=${join(temp.dir, 'client.js')}`], { stdout: 'pipe', stderr: 'pipe' })
  expect(build.exitCode).toBe(0)
  const script = join(temp.dir, 'use-client.mjs')
  await Bun.write(
    script,
    `import { Client, InvalidRequestError } from './client.js'
     const client = new Client({ baseUrl: process.argv[2], token: process.argv[3] })
     const ids = []
     for await (const ticket of client.tickets({ from: '2025-12-01', to: '2026-06-01', limit: 2 })) ids.push(ticket.id)
     const locations = (await client.queues()).locations.length
     const bad = await (async () => { try { for await (const t of client.tickets({ from: '2026-03-01', to: '2026-03-02', limit: 501 })) void t } catch (e) { return e instanceof InvalidRequestError ? e.param : String(e) } })()
     console.log(JSON.stringify({ node: process.version, ids, locations, bad }))`,
  )
  // Not spawnSync: the server answering Node runs in this process.
  const node = Bun.spawn(['node', script, server.base, token], { stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr] = await Promise.all([new Response(node.stdout).text(), new Response(node.stderr).text(), node.exited])
  expect(stderr).toBe('')
  const result = JSON.parse(stdout)
  expect(result.node).toMatch(/^v(2\d|[3-9]\d)\./)
  expect(result).toMatchObject({ ids: ['t-001', 't-002', 't-003', 't-004', 't-005', 't-006'], locations: 4, bad: 'limit' })
})
