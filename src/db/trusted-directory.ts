import type { Database } from 'bun:sqlite'
import { chmodSync, closeSync, constants, fchmodSync, lstatSync, openSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs'
import { join } from 'node:path'

/**
 * The data directory is trusted only when it is ours (decisions §28, as PostgreSQL treats its
 * own): DATA_DIR, orgs/ and every SQLite file in them belong to the running user, no other user
 * can write the directories, and nothing in them is a symbolic or hard link. Another user who
 * could plant a file there could make the service write where they point, or serve one
 * organisation another's data. Checked at every start and every admin command (whole), and
 * each time a file is opened later (that file).
 */

/** The data directory cannot be used by this process's user: said in one line that names the path, the owner and the fix. */
export class DataDirectoryError extends Error {}

/**
 * `user queue-api (uid 61234)`, or `uid 61234` for a uid without an entry in /etc/passwd. Read
 * from the file because Bun's os.userInfo() answers `unknown` for any user but the login's.
 */
export function userName(uid = process.geteuid?.() ?? 0): string {
  let name: string | undefined
  try {
    name = readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':')).find((fields) => fields[2] === String(uid))?.[0]
  } catch {
    // no /etc/passwd (an image built FROM scratch without one)
  }
  return name ? `user ${name} (uid ${uid})` : `uid ${uid}`
}

const runningUid = () => process.geteuid?.() ?? 0

/** The names in the data directory that are SQLite files the service opens, or SQLite's files beside them. */
const SQLITE_FILE = /\.sqlite(-wal|-shm|-journal)?$/

/**
 * Why the file at `path` (lstat'ed as `stats`) must not be opened, or undefined when it may:
 * a regular file of the running user's, with one name. Words for the log and for an operator.
 */
export function untrustedFileProblem(stats: Stats): string | undefined {
  if (stats.isSymbolicLink()) return 'is a symbolic link'
  if (!stats.isFile()) return 'is not a regular file'
  if (stats.uid !== runningUid()) return `belongs to ${userName(stats.uid)}, not to ${userName()} running the service`
  // Another name for the same file elsewhere (another organisation's, another application's).
  if (stats.nlink > 1) return `has ${stats.nlink} names (a hard link)`
  return undefined
}

/** The fix an operator reads after the problem of a file. */
function fileFix(path: string): string {
  return `put the service's own file there (owned by ${userName()}, mode 0600, one name) or remove ${path}`
}

/**
 * Checks the whole data directory before anything is opened or written in it; throws
 * DataDirectoryError naming the first path that is not trusted. A missing directory passes (it
 * is made private by whoever creates it). `fix`: a directory or file of ours whose mode lets
 * others read it is made private (0700, 0600): nobody else could have written it, since the
 * directories are ours and not writable by others. READ_ONLY=1 changes nothing, only checks.
 */
export function checkTrustedDataDirectory(dataDir: string, options: { fix: boolean }): void {
  const top = lstatSync(dataDir, { throwIfNoEntry: false })
  if (top === undefined) return
  if (top.isSymbolicLink()) {
    // systemd's StateDirectory= under DynamicUser=yes is such a link (root's, to private/<name>);
    // a link another user made could be pointed elsewhere by them.
    if (top.uid !== 0 && top.uid !== runningUid()) {
      throw new DataDirectoryError(`DATA_DIR ${dataDir} is a symbolic link made by ${userName(top.uid)}: only a link of root's or of ${userName()} is followed; set DATA_DIR to the directory itself`)
    }
    // A link to nowhere: left to the creation that follows, which names the failure.
    const target = statSync(dataDir, { throwIfNoEntry: false })
    if (target === undefined) return
    checkDirectory(dataDir, target, options.fix, 'DATA_DIR')
  } else {
    checkDirectory(dataDir, top, options.fix, 'DATA_DIR')
  }
  for (const name of readdirSync(dataDir)) {
    if (SQLITE_FILE.test(name)) checkFile(join(dataDir, name), options.fix)
  }
  const orgs = join(dataDir, 'orgs')
  const orgsStats = lstatSync(orgs, { throwIfNoEntry: false })
  if (orgsStats === undefined) return
  if (orgsStats.isSymbolicLink()) throw new DataDirectoryError(`${orgs} is a symbolic link: the service follows none in DATA_DIR; put the directory itself there (owned by ${userName()}, mode 0700)`)
  checkDirectory(orgs, orgsStats, options.fix, 'the directory')
  for (const name of readdirSync(orgs)) {
    if (SQLITE_FILE.test(name)) checkFile(join(orgs, name), options.fix)
  }
}

function checkDirectory(path: string, stats: Stats, fix: boolean, what: string): void {
  if (!stats.isDirectory()) throw new DataDirectoryError(`${what} ${path} is not a directory: set DATA_DIR to a directory owned by ${userName()}`)
  if (stats.uid !== runningUid()) {
    throw new DataDirectoryError(`${what} ${path} belongs to ${userName(stats.uid)}, not to ${userName()} running this: run it as its owner, or make that user its owner (chown -R), or set DATA_DIR to a directory it owns`)
  }
  const mode = stats.mode & 0o777
  if ((mode & 0o022) !== 0) {
    throw new DataDirectoryError(`${what} ${path} is writable by others than its owner (mode ${octal(mode)}): another user may have put files in it; check them, then chmod 0700 ${path}`)
  }
  if (fix && (mode & 0o077) !== 0) chmodSync(path, 0o700)
}

function checkFile(path: string, fix: boolean): void {
  const stats = lstatSync(path, { throwIfNoEntry: false })
  if (stats === undefined) return
  const problem = untrustedFileProblem(stats)
  if (problem !== undefined) throw new DataDirectoryError(`${path} ${problem}: ${fileFix(path)}`)
  const mode = stats.mode & 0o777
  if (fix && (mode & 0o077) !== 0) chmodSync(path, 0o600)
  else if ((mode & 0o022) !== 0) throw new DataDirectoryError(`${path} is writable by others than its owner (mode ${octal(mode)}): chmod 0600 ${path}`)
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`
}

/** A file in the data directory that is not the service's own to open (see untrustedFileProblem). */
export class UntrustedFileError extends DataDirectoryError {
  constructor(
    readonly path: string,
    /** Without the path: what a log line of the server may say. */
    readonly problem: string,
  ) {
    super(`${path} ${problem}: ${fileFix(path)}`)
    this.name = 'UntrustedFileError'
  }
}

/** lstat identity (dev:inode) of the path, or null when nothing is there. */
export function linkIdentity(path: string): string | null {
  const stats = lstatSync(path, { throwIfNoEntry: false })
  return stats ? `${stats.dev}:${stats.ino}` : null
}

/**
 * Opens the SQLite file at `path` with `open`, only if it is the service's own file, and makes
 * sure afterwards that the file opened is the one checked: bun:sqlite opens by path (and its
 * options cannot ask SQLite not to follow a link), so the path is lstat'ed before and after,
 * and a file swapped in between is closed and refused. Throws UntrustedFileError, or `open`'s
 * own error (a missing file, say).
 */
export function openOwnFile(path: string, open: (path: string) => Database): Database {
  const before = lstatSync(path, { throwIfNoEntry: false })
  if (before !== undefined) {
    const problem = untrustedFileProblem(before)
    if (problem !== undefined) throw new UntrustedFileError(path, problem)
  }
  const db = open(path)
  const after = lstatSync(path, { throwIfNoEntry: false })
  if (after === undefined || (before !== undefined && (after.dev !== before.dev || after.ino !== before.ino)) || untrustedFileProblem(after) !== undefined) {
    db.close(false)
    throw new UntrustedFileError(path, 'was replaced while it was being opened')
  }
  return db
}

/**
 * Creates an empty 0600 file at `path` unless something is there already, never through a
 * link: O_EXCL fails on any existing name, a dangling symbolic link included, which the check
 * of the open that follows then refuses.
 */
export function createPrivateFile(path: string): void {
  let fd: number
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return
  }
  try {
    fchmodSync(fd, 0o600) // whatever the umask took away
  } finally {
    closeSync(fd)
  }
}
