import { describe, expect, spyOn, test } from 'bun:test'
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startServer, tempDataDir, assertNoSecretsLogged } from '../support/harness.ts'
import { generateToken } from '../../src/auth/token.ts'
import * as tokenModule from '../../src/auth/token.ts'
import { ControlStore } from '../../src/control/store.ts'

describe('response hygiene', () => {
  test('the log audit catches a leaked secret (the check every test server runs at close)', () => {
    expect(() => assertNoSecretsLogged(['{"event":"request","query":"svc_abc"}'], ['svc_abc'])).toThrow('a secret was logged')
    expect(() => assertNoSecretsLogged(['{"event":"request"}'], ['svc_abc'])).not.toThrow()
  })
})

describe('token checks cost the same for unknown and revoked tokens', () => {
  test('one hash and one indexed look-up each; a bad checksum touches no database', async () => {
    const server = await startServer()
    const { org } = server.organisation()
    const revoked = server.token(org.id)
    server.app.store.revokeToken(revoked.id, new Date().toISOString())
    const lookups = spyOn(server.app.store, 'lookupToken')
    const hashes = spyOn(tokenModule, 'hashToken')
    const attempt = async (bearer: string) => {
      lookups.mockClear()
      hashes.mockClear()
      expect((await server.get('/v1/queues', bearer)).status).toBe(401)
      return { lookups: lookups.mock.calls.length, hashes: hashes.mock.calls.length }
    }
    const unknown = await attempt(generateToken())
    const wasRevoked = await attempt(revoked.token)
    expect(unknown).toEqual({ lookups: 1, hashes: 1 })
    expect(wasRevoked).toEqual(unknown)
    expect(await attempt(revoked.token.slice(0, -1) + (revoked.token.endsWith('A') ? 'B' : 'A'))).toEqual({ lookups: 0, hashes: 0 })
    lookups.mockRestore()
    hashes.mockRestore()
    await server.close()
  })
})

describe('active tokens are remembered, and changes made elsewhere still count on the next request', () => {
  test('revoking a token, disabling the API or deleting the organisation from another connection (the admin CLI)', async () => {
    const server = await startServer()
    const { org, token } = server.organisation()
    const second = server.token(org.id)
    const third = server.organisation()
    // Warm the memory of active tokens first.
    for (const bearer of [token, second.token, third.token]) expect((await server.get('/v1/queues', bearer)).status).toBe(200)
    const elsewhere = new ControlStore(server.dataDir)
    try {
      elsewhere.revokeToken(second.id, new Date().toISOString())
      expect((await server.get('/v1/queues', second.token)).status).toBe(401)
      expect((await server.get('/v1/queues', token)).status).toBe(200)
      elsewhere.updateOrganisation(org.id, { apiEnabled: false })
      expect((await server.get('/v1/queues', token)).status).toBe(402)
      elsewhere.updateOrganisation(org.id, { apiEnabled: true })
      expect((await server.get('/v1/queues', token)).status).toBe(200)
      elsewhere.db.run('DELETE FROM api_tokens WHERE organisation_id = ?', [third.org.id])
      expect((await server.get('/v1/queues', third.token)).status).toBe(401)
    } finally {
      elsewhere.close()
      await server.close()
    }
  })

  test("the server's own store writes empty the memory too", async () => {
    const server = await startServer()
    const { org, token } = server.organisation()
    expect((await server.get('/v1/queues', token)).status).toBe(200)
    server.app.store.updateOrganisation(org.id, { apiEnabled: false })
    expect((await server.get('/v1/queues', token)).status).toBe(402)
    await server.close()
  })
})

describe('the data directory', () => {
  test('created by the server 0700, its files 0600', async () => {
    const temp = tempDataDir()
    const dataDir = join(temp.dir, 'new', 'data')
    const server = await startServer({}, { dataDir })
    server.organisation()
    const files = [join(dataDir, 'control.sqlite'), ...readdirSync(join(dataDir, 'orgs')).map((f) => join(dataDir, 'orgs', f))]
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dataDir, 'orgs')).mode & 0o777).toBe(0o700)
    for (const file of files) expect({ file, mode: statSync(file).mode & 0o777 }).toEqual({ file, mode: 0o600 })
    await server.close()
    temp.cleanup()
  })

  test("an existing data directory open to others (a checkout's ./data is 0755) is made 0700", async () => {
    const temp = tempDataDir()
    const dataDir = join(temp.dir, 'data')
    mkdirSync(dataDir, { mode: 0o755 })
    chmodSync(dataDir, 0o755)
    const server = await startServer({}, { dataDir })
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    await server.close()
    temp.cleanup()
  })
})

describe('last used', () => {
  test('recorded in batches, not per request, and written on close', async () => {
    const temp = tempDataDir()
    const server = await startServer({}, { dataDir: temp.dir })
    const { org, token } = server.organisation()
    const writes = spyOn(server.app.store, 'recordTokenUse')
    for (let i = 0; i < 5; i++) await (await server.get('/v1/queues', token)).arrayBuffer()
    expect(writes).not.toHaveBeenCalled() // no write on the request path
    await server.close()
    const store = new ControlStore(temp.dir)
    expect(store.listTokens(org.id)[0]!.lastUsedAt).toBe(new Date(server.clock.now()).toISOString())
    store.close()
    temp.cleanup()
  })
})
