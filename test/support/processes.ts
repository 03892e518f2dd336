import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/** What the tests see of running processes from /proc: their listening sockets, their children, whether they live. */

/** Pids of the processes among `pids` holding a listening TCP socket on `port` (from /proc, as `ss -ltnp` would show). */
export function listeners(port: number, pids: number[]): number[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0')
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields[1]?.endsWith(`:${hex}`) && fields[3] === '0A') inodes.add(fields[9]!)
    }
  }
  return pids.filter((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? ''))
    } catch {
      return false // gone
    }
  })
}

/** The child processes of `pid` (a supervisor's workers), from /proc. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/**
 * Whether a process of this pid is running: one that has exited but is not yet reaped (a zombie,
 * which an orphan stays until the init process of a container or sandbox gets to it) is not.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false // gone meanwhile
  }
}

/** The process group of `pid` (the fifth field of /proc/<pid>/stat, after the command in parentheses). */
export function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
}
