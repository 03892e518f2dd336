/**
 * Whether `port` on `host` is free, found by binding it exclusively (no SO_REUSEPORT) for a
 * moment: the workers bind it with reusePort, and a listener of another program holding it
 * must stop start-up rather than have the kernel split requests with it. Returns the port bound
 * (the one the kernel chose when `port` is 0, which the workers then share); throws
 * PortInUseError when another program holds it.
 */
export function probePort(host: string, port: number): number {
  let listener
  try {
    listener = Bun.listen({ hostname: host, port, socket: { data() {} } })
  } catch (error) {
    throw new PortInUseError(port, host, error)
  }
  const bound = listener.port
  listener.stop(true)
  return bound
}

export class PortInUseError extends Error {
  override name = 'PortInUseError'
  constructor(
    readonly port: number,
    readonly host: string,
    cause: unknown,
  ) {
    super(`port ${port} on ${host} is already in use by another program; stop it or choose another PORT`, { cause })
  }
}
