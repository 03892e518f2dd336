import type { SQL } from 'bun'
import { existsSync } from 'node:fs'
import { SyncInputError } from './target.ts'

/**
 * Where `sync --into postgresql://…` connects, read as libpq reads a connection URL and its
 * environment (PGUSER, PGPASSWORD, PGSSLMODE, PGSSLROOTCERT), and the TLS option Bun's client
 * takes for it (docs/loading.md#postgresql).
 */

export interface PostgresLocation {
  /** For messages: the URL without its password, and the schema. */
  description: string
  hostname: string
  port: number
  username: string
  password: string | undefined
  database: string
  schema: string
  /** libpq's sslmode, `prefer` when none is given (as psql does). */
  sslMode: SslMode
  /** A CA certificate file to verify the server against (libpq's sslrootcert). */
  sslRootCert: string | undefined
  /** `--grant`: a role given read access to the schema, tables created later included. */
  grantTo?: string
}

/**
 * A schema or role name that reads the same quoted and unquoted: PostgreSQL folds an unquoted
 * name to lower case, so `Analytics` would be a schema a BI tool's `analytics.tickets` misses.
 */
const PLAIN_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** The name as written, or wrong input that gives the lower-case spelling to use. */
function plainName(option: string, name: string): string {
  if (PLAIN_NAME.test(name)) return name
  const lower = name.toLowerCase()
  const advice = PLAIN_NAME.test(lower) ? `: use ${option} ${lower}` : ''
  throw new SyncInputError(`${option} takes a lower-case name (a-z, 0-9, _; not starting with a digit), as PostgreSQL reads it unquoted; got ${name}${advice}`)
}

/**
 * PostgreSQL's reserved key words (pg_get_keywords() categories R and T, PostgreSQL 15, and
 * system_user of 16): a schema of one of these names is refused by every unquoted query.
 */
const RESERVED_WORDS = new Set(
  `all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column
   concurrently constraint create cross current_catalog current_date current_role current_schema current_time current_timestamp
   current_user default deferrable desc distinct do else end except false fetch for foreign freeze from full grant group having
   ilike in initially inner intersect into is isnull join lateral leading left like limit localtime localtimestamp natural not
   notnull null offset on only or order outer overlaps placing primary references returning right select session_user similar
   some symmetric system_user table tablesample then to trailing true union unique user using variadic verbose when where window
   with`.split(/\s+/),
)

/** `--schema`: a plain lower-case name that PostgreSQL accepts unquoted and for a new schema (no pg_ prefix). */
export function parseSchemaName(schema: string): string {
  // The rules below are checked on the lower-case name too, so that plainName never suggests a
  // name they refuse (INFORMATION_SCHEMA → information_schema).
  const lower = schema.toLowerCase()
  if (lower !== schema && (RESERVED_WORDS.has(lower) || lower === 'information_schema' || lower.startsWith('pg_'))) parseSchemaName(lower)
  plainName('--schema', schema)
  if (RESERVED_WORDS.has(schema)) throw new SyncInputError(`--schema ${schema} is a reserved word in PostgreSQL, which queries could only name quoted; choose another name`)
  if (schema === 'information_schema') throw new SyncInputError(`--schema information_schema is PostgreSQL's own catalog, which BI tools hide; choose another name`)
  if (schema.startsWith('pg_')) throw new SyncInputError(`--schema ${schema}: names starting with pg_ are reserved for PostgreSQL's own schemas; choose another name`)
  return schema
}

/** `--grant`'s role, a plain lower-case name. */
export function parseRoleName(role: string): string {
  // PUBLIC is not a role but every role of the database: granting the mirror to it is never what
  // a reader's role was meant to do, and the server would take `public` as PUBLIC.
  if (role.toLowerCase() === 'public') {
    throw new SyncInputError('--grant public would give every role of the database read access (PUBLIC is not a role); name the role your BI tool logs in as, e.g. --grant bi_reader after CREATE ROLE bi_reader LOGIN')
  }
  if (role.toLowerCase().startsWith('pg_')) throw new SyncInputError(`--grant ${role}: names starting with pg_ are PostgreSQL's own roles; name the role your BI tool logs in as`)
  return plainName('--grant', role)
}

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const
type SslMode = (typeof SSL_MODES)[number]

/** The modes in which a CA file is used: the chain is checked against it. */
const VERIFYING_MODES: readonly SslMode[] = ['require', 'verify-ca', 'verify-full']

/** The URL parameters `sync` reads; any other is refused rather than silently ignored. */
const URL_PARAMETERS = ['sslmode', 'sslrootcert']

/**
 * The URL's query as libpq reads it: `name=value` pairs, percent-decoded (a `+` stays a `+`,
 * unlike a form's). A parameter `sync` would ignore is wrong input: a user who wrote `?ssl=true`
 * believes the password travels encrypted.
 */
function urlParameters(url: URL): Map<string, string> {
  const parameters = new Map<string, string>()
  for (const pair of url.search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue
    const [name = '', value = ''] = pair.split(/=(.*)/s)
    let decoded: [string, string]
    try {
      decoded = [decodeURIComponent(name), decodeURIComponent(value)]
    } catch {
      throw new SyncInputError(`--into: the URL parameter ${name} is not percent-encoded correctly`)
    }
    if (!URL_PARAMETERS.includes(decoded[0])) {
      throw new SyncInputError(`--into: the URL parameter ${decoded[0]} is not supported; sync reads ${URL_PARAMETERS.join(' and ')} (as libpq does)`)
    }
    parameters.set(...decoded)
  }
  return parameters
}

/**
 * The TLS settings, as libpq reads them: the URL's `sslmode` and `sslrootcert`, else PGSSLMODE
 * and PGSSLROOTCERT; a message names where a wrong value came from. The CA file counts only in
 * the modes that verify (require with a CA file verifies the chain, as libpq's does), so only
 * there must it exist.
 */
function tlsSettings(url: URL, env: Record<string, string | undefined>): { sslMode: SslMode; sslRootCert: string | undefined } {
  const parameters = urlParameters(url)
  const [mode, modeSource] = parameters.has('sslmode') ? [parameters.get('sslmode')!, '--into: sslmode'] : [env.PGSSLMODE ?? 'prefer', 'PGSSLMODE']
  if (!(SSL_MODES as readonly string[]).includes(mode)) {
    throw new SyncInputError(`${modeSource} ${mode} is not one of ${SSL_MODES.join(', ')}`)
  }
  const sslMode = mode as SslMode
  if (!VERIFYING_MODES.includes(sslMode)) return { sslMode, sslRootCert: undefined }
  const [sslRootCert, certSource] = parameters.has('sslrootcert') ? [parameters.get('sslrootcert'), '--into: sslrootcert'] : [env.PGSSLROOTCERT, 'PGSSLROOTCERT']
  if (sslRootCert !== undefined && !existsSync(sslRootCert)) throw new SyncInputError(`${certSource} ${sslRootCert} does not exist`)
  return { sslMode, sslRootCert }
}

/** A percent-encoded part of the URL, decoded; a bad escape (`%zz`, a cut UTF-8 sequence) is wrong input that never repeats the part. */
function decodedPart(part: string, text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new SyncInputError(`--into: the URL's ${part} is not percent-encoded correctly (a % must start an escape such as %25 for % itself, %40 for @)`)
  }
}

/**
 * Reads `postgresql://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=…]` (or
 * `postgres://`); the password from the URL, else PGPASSWORD. Wrong input is a SyncInputError
 * that never repeats the password.
 */
export function parsePostgresUrl(into: string, schema: string, env: Record<string, string | undefined>): PostgresLocation {
  let url: URL
  try {
    url = new URL(into)
  } catch {
    throw new SyncInputError('--into is not a valid PostgreSQL URL: write postgresql://user@host:5432/database (the password in PGPASSWORD)')
  }
  const database = decodedPart('database name', url.pathname.replace(/^\//, ''))
  if (!url.hostname || !database || database.includes('/')) {
    throw new SyncInputError('--into needs a host and a database: postgresql://user@host:5432/database')
  }
  parseSchemaName(schema)
  const port = url.port ? Number(url.port) : 5432
  const username = decodedPart('user name', url.username) || env.PGUSER || 'postgres'
  const password = url.password ? decodedPart('password', url.password) : env.PGPASSWORD
  return {
    ...tlsSettings(url, env),
    description: `postgresql://${encodeURIComponent(username)}@${url.host}/${encodeURIComponent(database)} (schema ${schema})`,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    username,
    password,
    database,
    schema,
  }
}

/**
 * What Bun's client takes for libpq's sslmode and sslrootcert. `disable`, `allow` and `prefer`
 * verify nothing and go as they are (Bun's `allow` tries TLS first, where libpq tries plain
 * first: the same connection or a safer one). `require` with a CA file checks the chain, as
 * libpq's does. Where a certificate is checked, `rejectUnauthorized` is set: without it Bun
 * obeys a NODE_TLS_REJECT_UNAUTHORIZED=0 left in the environment and checks nothing, and the
 * password would go to whoever answered.
 */
export function tlsOption(location: PostgresLocation): SQL.PostgresOrMySQLOptions['tls'] {
  const { sslMode, sslRootCert } = location
  const ca = sslRootCert === undefined ? {} : { ca: Bun.file(sslRootCert) }
  if (sslMode === 'verify-full') return { ...ca, rejectUnauthorized: true }
  if (sslMode === 'verify-ca' || (sslMode === 'require' && sslRootCert !== undefined)) {
    return { ...ca, rejectUnauthorized: true, checkServerIdentity: () => undefined }
  }
  return sslMode
}
