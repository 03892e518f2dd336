import { createServer } from 'node:net'

/**
 * Starting on a port that another process listens on must fail, not share it.
 *
 * Bun.serve in production mode (`development: false`, as the service runs) sets SO_REUSEPORT
 * unless told `reusePort: false`; two such processes on one port then both listen and Linux
 * splits the connections between them, here between two data directories. So:
 *
 * - `assertPortFree` proves the port free before anything else happens, with a probe socket
 *   bound WITHOUT SO_REUSEPORT: Linux lets a socket join a port only when every socket on it set
 *   SO_REUSEPORT, so the probe fails on any listener at all, ours or another program's, whatever
 *   its options. (The probe sets SO_REUSEADDR, as node:net does, so connections of a previous
 *   run lingering in TIME_WAIT do not count as "in use".) The probe is closed again at once.
 * - The server then listens with `reusePort: false`, which closes the gap between the probe and
 *   the listen: a process that got there in between makes the listen fail with EADDRINUSE
 *   (`isAddressInUse`), reported the same way.
 *
 * With `WORKERS=N`, N processes of ours share the port on purpose: the supervisor calls
 * `assertPortFree` once before it starts them (so a port held by another program still stops
 * the start), and the workers listen with `reusePort: true`, which lets them join each other.
 * A worker must not probe: its siblings already hold the port.
 */
export class PortInUseError extends Error {
  /** `variable`: the setting that chose the port, which the message tells the operator to change. */
  constructor(readonly host: string, readonly port: number, variable: 'PORT' | 'METRICS_PORT' = 'PORT') {
    super(`${variable} ${port} on ${host} is already in use by another process: stop it, or set ${variable} to a free port (${variable}=0 picks one)`)
  }
}

/**
 * Resolves when `port` on `host` can be bound now, to the port it bound (the kernel's choice
 * when `port` is 0, which the workers of WORKERS=N then share); rejects with PortInUseError when
 * another process holds it.
 */
export async function assertPortFree(host: string, port: number): Promise<number> {
  const probe = createServer()
  return new Promise<number>((resolve, reject) => {
    probe.once('error', (error) => reject(isAddressInUse(error) ? new PortInUseError(host, port) : error))
    probe.listen({ host, port, exclusive: true }, () => {
      const bound = (probe.address() as { port: number }).port
      probe.close(() => resolve(bound))
    })
  })
}

/** The error Bun.serve and node:net throw when the address is taken. */
export function isAddressInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EADDRINUSE'
}
