import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/**
 * A start that the host refuses (an address that is not this machine's, a data directory below a
 * file or on a read-only disk, …) said in one line that names the setting to change, for the
 * server, `admin` and `sync` alike; the caller exits 2 with it. An error this module does not
 * recognise is a bug, and keeps its stack trace.
 */

/** What the start was doing when it failed: the setting(s) the line names. */
export type StartStep =
  | { listen: 'PORT' | 'METRICS_PORT'; host: string; port: number }
  | { dataDir: string }
  | { directory: string; setting: string }

interface CodedError {
  code?: unknown
  path?: unknown
  message?: unknown
}

const codeOf = (error: unknown) => {
  const code = (error as CodedError | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** What a code means for a directory the program must write, and what to do about it. */
const DIRECTORY_PROBLEMS: Record<string, string> = {
  ENOTDIR: 'is not a directory (or lies below a file)',
  EEXIST: 'is not a directory (or lies below a file)',
  EROFS: 'is on a read-only file system',
  ENOSPC: 'is on a full file system',
  EDQUOT: 'is on a file system where this user\'s quota is used up',
  EACCES: 'cannot be read or written by this user',
  EPERM: 'cannot be read or written by this user',
  ELOOP: 'is reached through too many symbolic links',
  ENAMETOOLONG: 'is a path too long for this system',
  ENOENT: 'does not exist',
  EIO: 'cannot be read: the disk reported an I/O error',
  EMFILE: 'cannot be opened: this process has too many files open (raise LimitNOFILE / ulimit -n)',
  ENFILE: 'cannot be opened: the system has too many files open',
}

/** SQLite's codes for a control.sqlite it cannot use. */
const SQLITE_PROBLEMS: Record<string, string> = {
  SQLITE_NOTADB: 'is not a SQLite database: restore it from a backup',
  SQLITE_CORRUPT: 'is damaged: restore it from a backup',
  SQLITE_CANTOPEN: 'cannot be opened (a directory in its place, or a directory this user cannot write)',
  SQLITE_READONLY: 'cannot be written (a read-only file or file system; READ_ONLY=1 serves a replica\'s copy)',
  SQLITE_FULL: 'cannot grow: the file system is full',
  SQLITE_IOERR: 'cannot be read or written: the disk reported an I/O error',
  // Its -shm file could not grow: on a full tmpfs, say.
  SQLITE_IOERR_SHMSIZE: 'cannot grow its -shm file: the file system is full',
  SQLITE_BUSY: 'is locked by another process',
  SQLITE_PERM: 'cannot be opened by this user',
}

/** The one line for `error` at `step`, or undefined for an error that is not the host's (a bug). */
export function describeStartUpFailure(error: unknown, step: StartStep): string | undefined {
  const code = codeOf(error)
  if ('listen' in step) return listenLine(error, code, step)
  const [setting, directory] = 'dataDir' in step ? ['DATA_DIR', step.dataDir] : [step.setting, step.directory]
  if (code?.startsWith('SQLITE_')) {
    const problem = SQLITE_PROBLEMS[code] ?? SQLITE_PROBLEMS[/^SQLITE_[A-Z]+/.exec(code)![0]]
    if (problem === undefined) return undefined
    return `${setting} ${directory}: control.sqlite ${problem} (${code})`
  }
  const problem = code === undefined ? undefined : DIRECTORY_PROBLEMS[code]
  if (problem === undefined) return undefined
  const path = (error as CodedError).path
  // The file that failed when it is one inside the directory; the directory's own name otherwise.
  const where = typeof path === 'string' && path !== directory ? ` (${path})` : ''
  const fix = setting.startsWith('--')
    ? `give ${setting} a path in a directory this user can write`
    : code === 'EROFS' && setting === 'DATA_DIR'
      ? 'set DATA_DIR to a directory on a writable file system, or READ_ONLY=1 to serve a replica\'s copy'
      : `set ${setting} to a directory this user can write`
  return `${setting} ${directory}${where} ${problem} (${code}): ${fix}`
}

/**
 * A directory to be written that lies on a read-only file system: refused as such (EROFS) before
 * the checks of its owner and mode, whose advice (chown) would not help. Asked of the directory,
 * or of its nearest ancestor that exists when it is still to be made.
 */
export function assertWritableFileSystem(path: string): void {
  let existing = resolve(path)
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing)
  try {
    accessSync(existing, constants.W_OK)
  } catch (error) {
    // Only the file system's answer: a permission is the owner checks' to explain.
    if (codeOf(error) === 'EROFS') throw Object.assign(new Error(`EROFS: read-only file system, ${path}`), { code: 'EROFS', path })
  }
}

/**
 * Before a command creates a file at `path`: its directory exists, is one, and this user can
 * write it (and the file, when it is there already). Throws the OS's error, which
 * describeStartUpFailure turns into the line.
 */
export function assertWritableFileLocation(path: string): void {
  const directory = dirname(path)
  if (!statSync(directory).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, ${directory}`), { code: 'ENOTDIR', path: directory })
  accessSync(directory, constants.W_OK)
  if (existsSync(path)) accessSync(path, constants.R_OK | constants.W_OK)
}

function listenLine(error: unknown, code: string | undefined, step: { listen: 'PORT' | 'METRICS_PORT'; host: string; port: number }): string {
  const hostSetting = step.listen === 'PORT' ? 'HOST' : 'METRICS_HOST'
  const at = `${step.listen} ${step.port} on ${hostSetting} ${step.host}`
  switch (code) {
    case 'EADDRINUSE':
      return `${step.listen} ${step.port} on ${step.host} is already in use by another process: stop it, or set ${step.listen} to a free port (${step.listen}=0 picks one)`
    case 'EADDRNOTAVAIL':
      return `${hostSetting} ${step.host} is not an address of this machine (EADDRNOTAVAIL): set ${hostSetting} to one of its addresses, 127.0.0.1 for this machine alone or 0.0.0.0 for every interface`
    case 'EACCES':
    case 'EPERM':
      return `${at} needs a privilege this user lacks (${code}): set ${step.listen} to 1024 or above, or grant CAP_NET_BIND_SERVICE`
    case 'EAFNOSUPPORT':
      return `${hostSetting} ${step.host} is of an address family this machine does not serve (${code}): set ${hostSetting} to 127.0.0.1 or 0.0.0.0`
    default: {
      // Bun's node:net gives a host name that does not resolve no code: "Failed to listen at <host>".
      const message = String((error as CodedError | null)?.message ?? error).split('\n')[0]
      return `${at} cannot be listened on (${code ?? message}): set ${hostSetting} to an address of this machine (127.0.0.1, 0.0.0.0) and ${step.listen} to a free port`
    }
  }
}

/**
 * A directory setting that names something other than a directory: refused before anything
 * would chmod or write it (mkdir of an existing file fails, but a check of its mode would not).
 */
export function assertDirectoryOrAbsent(path: string): void {
  let isDirectory: boolean
  try {
    isDirectory = statSync(path).isDirectory()
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return // made later
    throw error
  }
  if (!isDirectory) throw Object.assign(new Error(`ENOTDIR: not a directory, ${path}`), { code: 'ENOTDIR', path })
}
