import { createServer } from 'node:net'

/**
 * Starting on a port that another process listens on must fail, not share it: Bun.serve in
 * production mode sets SO_REUSEPORT unless told not to (docs/decisions/0019-port-never-shared.md).
 * The supervisor probes once without SO_REUSEPORT, which fails on any listener; a worker must not
 * probe, its siblings already hold the port.
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
