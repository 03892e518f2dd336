import { resolve } from 'node:path'

/** The replica URL schemes Litestream 0.3 knows. */
const REPLICA_SCHEMES = ['file:', 's3:', 'gcs:', 'abs:', 'sftp:']

/** What is wrong with a replica URL given to `admin replica …`, or undefined. */
export function replicaUrlProblem(url: string): string | undefined {
  let scheme: string
  try {
    scheme = new URL(url).protocol
  } catch {
    return `"${url}" is not a URL; give one such as file:///srv/replica or s3://bucket/path`
  }
  if (!REPLICA_SCHEMES.includes(scheme)) return `a replica URL starts with ${REPLICA_SCHEMES.map((s) => `${s}//`).join(', ')}; got ${scheme}//`
}

/**
 * The files of a data directory that a replica needs, relative to it: control.sqlite, and every
 * organisation's tenant file. Each is replicated under the same relative path of the replica URL.
 */
export function replicatedFiles(organisationIds: readonly string[]): string[] {
  return ['control.sqlite', ...organisationIds.map((id) => `orgs/${id}.sqlite`)]
}

/** Where one file is replicated: `<replica URL>/<relative path>`. */
export function replicaUrlOf(replicaUrl: string, file: string): string {
  return `${replicaUrl.replace(/\/+$/, '')}/${file}`
}

/**
 * The `litestream.yml` that replicates the writer's data directory to `replicaUrl`. Litestream
 * 0.3 lists databases one by one, so a new organisation needs the file made again and
 * Litestream restarted.
 */
export function litestreamConfig(dataDir: string, organisationIds: readonly string[], replicaUrl: string): string {
  const lines = [
    '# Made by `admin replica litestream-config`: make it again, and restart Litestream, after creating an organisation.',
    'dbs:',
  ]
  for (const file of replicatedFiles(organisationIds)) {
    lines.push(`  - path: ${JSON.stringify(resolve(dataDir, file))}`, '    replicas:', `      - url: ${JSON.stringify(replicaUrlOf(replicaUrl, file))}`)
  }
  return lines.join('\n')
}
