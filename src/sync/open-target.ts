import { DuckDbTarget } from './duckdb-target.ts'
import { PostgresTarget } from './postgres-target.ts'
import { parsePostgresUrl, type PostgresLocation } from './postgres-location.ts'
import { SyncInputError, type SyncTarget } from './target.ts'

/** Where `--into` points: a DuckDB file or a PostgreSQL schema. */
export type TargetSpec = { kind: 'duckdb'; path: string } | { kind: 'postgresql'; location: PostgresLocation }

/**
 * Reads `--into` (and `--schema`): a path ending in `.duckdb`, or a `postgresql://` /
 * `postgres://` URL. Anything else is wrong input; the message names the scheme, never the rest
 * of a URL (which may hold a password).
 */
export function parseTarget(into: string, schema: string | undefined, env: Record<string, string | undefined>): TargetSpec {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(into)?.[1]?.toLowerCase()
  if (scheme === 'postgresql' || scheme === 'postgres') return { kind: 'postgresql', location: parsePostgresUrl(into, schema ?? 'public', env) }
  if (scheme !== undefined) {
    throw new SyncInputError(`--into takes a DuckDB file (….duckdb) or a PostgreSQL URL (postgresql://…); ${scheme}:// is not supported`)
  }
  if (!/\.duckdb$/i.test(into)) throw new SyncInputError(`--into takes a DuckDB file whose name ends in .duckdb, or a PostgreSQL URL (postgresql://…); got ${into}`)
  if (schema !== undefined) throw new SyncInputError('--schema applies to a PostgreSQL target only')
  return { kind: 'duckdb', path: into }
}

/** How long a PostgreSQL target waits for a lock another session holds (`--timeout`). */
export interface TargetOptions {
  lockTimeoutSeconds?: number
}

export function openTarget(spec: TargetSpec, options: TargetOptions = {}): Promise<SyncTarget> {
  return spec.kind === 'duckdb' ? DuckDbTarget.open(spec.path) : PostgresTarget.open(spec.location, options.lockTimeoutSeconds ?? 60)
}
