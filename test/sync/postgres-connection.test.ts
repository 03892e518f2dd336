import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { postgresAvailable, startPostgres, type PostgresServer } from '../support/postgres-server.ts'
import { sync, tenantServer, type Tenant } from '../support/sync-target-suite.ts'

/**
 * How `sync` connects to PostgreSQL, against a real cluster with TLS on: the URL's sslmode and
 * sslrootcert (and libpq's PGSSLMODE) are obeyed, `prefer` by default as psql does, and the
 * password is the URL's or PGPASSWORD's only, never one Bun would read from DATABASE_URL.
 */

const available = postgresAvailable()
let server: PostgresServer
let tenant: Tenant
let ca: { caFile: string; otherCaFile: string }

if (available) {
  beforeAll(async () => {
    server = await startPostgres()
    ca = server.enableTls()
    await server.createDatabase('tls_only')
    await server.createDatabase('warehouse')
    server.psql('postgres', "CREATE ROLE loader LOGIN PASSWORD 'right-password'")
    server.psql('postgres', 'GRANT ALL ON DATABASE warehouse TO loader')
    server.psql('warehouse', 'GRANT ALL ON SCHEMA public TO loader')
    server.addHbaRules([
      'hostnossl tls_only all 127.0.0.1/32 reject',
      'host warehouse loader 127.0.0.1/32 scram-sha-256',
    ])
    tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
  }, 60_000)
  afterAll(async () => {
    await tenant?.server.close()
    await server?.stop()
  })
}

describe.skipIf(!available)('sync: how it connects to PostgreSQL', () => {
  const tlsOnly = (query = '') => `postgresql://postgres@127.0.0.1:${server.port}/tls_only${query}`
  const run = (into: string, schema: string, env: Record<string, string> = {}) => sync(tenant, ['--url', tenant.server.base, '--into', into, '--schema', schema], env)
  const oneLine = (stderr: string) => expect(stderr.trim().split('\n')).toHaveLength(1)

  test('with no sslmode, TLS when the server offers it (prefer, as psql): a database that refuses plain connections is loaded', async () => {
    const result = await run(tlsOnly(), 'by_default')
    expect(result.stderr).toContain('mirror current')
    expect(result.status).toBe(0)
    expect(Number(server.psql('tls_only', 'SELECT count(*) FROM by_default.tickets'))).toBeGreaterThan(0)
  }, 60_000)

  test('sslmode=verify-full with the CA in sslrootcert: the certificate and its name are checked, and pass', async () => {
    const result = await run(tlsOnly(`?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca.caFile)}`), 'verified')
    expect(result.stderr).toContain('mirror current')
    expect(result.status).toBe(0)
  }, 60_000)

  test('a certificate another CA signed is refused by verify-full and verify-ca: exit 1, one line, nothing written', async () => {
    for (const mode of ['verify-full', 'verify-ca']) {
      const result = await run(tlsOnly(`?sslmode=${mode}&sslrootcert=${encodeURIComponent(ca.otherCaFile)}`), 'not_verified')
      expect(result.status).toBe(1)
      oneLine(result.stderr)
      expect(result.stderr).toContain('PostgreSQL at postgresql://postgres@127.0.0.1')
    }
    // Without a CA file the system's are used, which never signed a test certificate.
    const systemCas = await run(tlsOnly('?sslmode=verify-full'), 'not_verified')
    expect(systemCas.status).toBe(1)
    expect(server.psql('tls_only', "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'not_verified'")).toBe('0')
  }, 60_000)

  test('a CA file counts where libpq uses it: require checks the chain against it; prefer ignores it, a missing one too', async () => {
    const requireOther = await run(tlsOnly(`?sslmode=require&sslrootcert=${encodeURIComponent(ca.otherCaFile)}`), 'require_checked')
    expect(requireOther.status).toBe(1)
    oneLine(requireOther.stderr)
    const requireRight = await run(tlsOnly(`?sslmode=require&sslrootcert=${encodeURIComponent(ca.caFile)}`), 'require_checked')
    expect(requireRight.stderr).toContain('mirror current')
    const preferOther = await run(tlsOnly(), 'prefer_unchecked', { PGSSLROOTCERT: ca.otherCaFile })
    expect(preferOther.stderr).toContain('mirror current')
    const warehouse = `postgresql://postgres@127.0.0.1:${server.port}/warehouse?sslmode=disable&sslrootcert=/no/such/ca.pem`
    expect((await run(warehouse, 'plain_unchecked')).status).toBe(0)
  }, 60_000)

  test('a path in sslrootcert is percent-decoded only: a + stays a +', async () => {
    const withPlus = join(dirname(ca.caFile), 'ca+copy.crt')
    copyFileSync(ca.caFile, withPlus)
    const result = await run(tlsOnly(`?sslmode=verify-full&sslrootcert=${withPlus}`), 'plus_path')
    expect(result.stderr).toContain('mirror current')
  }, 60_000)

  test('NODE_TLS_REJECT_UNAUTHORIZED=0 left in the environment does not turn verification off: the password never goes to an unverified server', async () => {
    for (const mode of ['verify-full', 'verify-ca', 'require']) {
      const result = await run(tlsOnly(`?sslmode=${mode}&sslrootcert=${encodeURIComponent(ca.otherCaFile)}`), 'unverified', { NODE_TLS_REJECT_UNAUTHORIZED: '0' })
      expect(result.status).toBe(1)
      oneLine(result.stderr)
    }
    expect(server.psql('tls_only', "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'unverified'")).toBe('0')
  }, 60_000)

  test('sslmode=disable, in the URL or in PGSSLMODE, is obeyed: the TLS-only database refuses it with its reason', async () => {
    for (const [query, env] of [['?sslmode=disable', {}], ['', { PGSSLMODE: 'disable' }]] as const) {
      const result = await run(tlsOnly(query), 'plain', env)
      expect(result.status).toBe(1)
      oneLine(result.stderr)
      expect(result.stderr).toContain('no encryption')
      expect(result.stderr).not.toContain('every window committed')
    }
  }, 60_000)

  test('the password is the URL\'s or PGPASSWORD\'s, never DATABASE_URL\'s: Bun would read that URL for fields left unset', async () => {
    const into = `postgresql://loader@127.0.0.1:${server.port}/warehouse`
    const elsewhere = `postgresql://loader:right-password@127.0.0.1:${server.port}/warehouse`
    const withoutPassword = await run(into, 'loaded', { DATABASE_URL: elsewhere, PGPASSWORD: '' })
    expect(withoutPassword.status).toBe(1)
    oneLine(withoutPassword.stderr)
    expect(withoutPassword.stderr).toContain('password authentication failed for user "loader"')
    expect(withoutPassword.stderr).not.toContain('right-password')
    expect(withoutPassword.stderr).toContain('no password was given: set PGPASSWORD, or put it in the URL')
    expect(withoutPassword.stderr).not.toContain('every window committed')
    const withPassword = await run(into, 'loaded', { DATABASE_URL: 'postgresql://someone:else@127.0.0.1:1/nothing', PGPASSWORD: 'right-password' })
    expect(withPassword.stderr).toContain('mirror current')
    expect(withPassword.status).toBe(0)
  }, 60_000)
})
