import { accessSync, constants, readFileSync, statSync } from 'node:fs'
import { DataDirectoryError, userName } from './trusted-directory.ts'

/**
 * The command that runs admin as the unit in deploy/systemd runs the server: the same dynamic
 * user (DynamicUser= with User=queue-api, the unit's name) and the same StateDirectory=.
 */
export const UNIT_ADMIN_COMMAND =
  'systemd-run --pipe --wait --quiet -p DynamicUser=yes -p User=queue-api -p StateDirectory=queue-api -p EnvironmentFile=-/etc/queue-api/env -E DATA_DIR=/var/lib/queue-api /usr/local/bin/queue-api admin …'

/** The primary group of `uid` in /etc/passwd, if it has an entry there. */
function primaryGroup(uid: number): number | undefined {
  try {
    const entry = readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':')).find((fields) => fields[2] === String(uid))
    return entry?.[3] === undefined ? undefined : Number(entry[3])
  } catch {
    return undefined
  }
}

/**
 * Root running `admin` on a data directory another user owns (the service's) becomes that user
 * before anything is opened, so that every file it makes is the service's to read and write
 * (decisions §28): setgroups, setgid, setuid of the whole process, all its threads. Then the
 * trust checks hold for it as for the service. Where that user cannot reach the directory from
 * here (systemd's DynamicUser= keeps it below /var/lib/private, root's alone), one line says
 * how to run admin as the unit does.
 */
export function becomeDataDirectoryOwner(dataDir: string): void {
  if (process.geteuid?.() !== 0) return
  // Through systemd's link to private/queue-api: the owner of the directory itself.
  const stats = statSync(dataDir, { throwIfNoEntry: false })
  if (stats === undefined || stats.uid === 0 || !stats.isDirectory()) return
  const owner = stats.uid
  process.setgroups!([])
  process.setgid!(primaryGroup(owner) ?? stats.gid)
  process.setuid!(owner)
  try {
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    throw new DataDirectoryError(
      `DATA_DIR ${dataDir} belongs to ${userName(owner)}, whom root's admin runs as, but who cannot reach it from here (${code}): run admin as the service does, e.g. under the systemd unit: ${UNIT_ADMIN_COMMAND}`,
    )
  }
}
