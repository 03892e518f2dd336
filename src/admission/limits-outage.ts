import type { Logger } from '../logger.ts'
import { ApiError } from '../errors/api-error.ts'

/**
 * Turns a failure of the limits into 503 `limits_unavailable` with `Retry-After: 1`, and logs
 * each backend's outage (Redis, control.sqlite) once when it starts and once when that same
 * backend answers again: a demo request whose window (memory) answers and whose quota
 * (control.sqlite) does not is one outage, not a recovery and a new one.
 */
export class LimitsOutage {
  private readonly down = new Set<string>()

  constructor(
    private readonly logger: Logger,
    /** Told false when a first backend fails, true when the last failing one answers again. */
    private readonly onStateChange: (up: boolean) => void = () => {},
  ) {}

  async guard<T>(backend: string, call: () => Promise<T>): Promise<T> {
    let result: T
    try {
      result = await call()
    } catch (error) {
      if (!this.down.has(backend)) {
        this.down.add(backend)
        this.logger.error('limits_unavailable', { backend, error: describe(error) })
        if (this.down.size === 1) this.onStateChange(false)
      }
      throw new ApiError(
        'limits_unavailable',
        'The rate limits cannot be checked right now, so the request was not served; retry in a second.',
        {},
        { 'Retry-After': '1' },
      )
    }
    if (this.down.delete(backend)) {
      this.logger.info('limits_recovered', { backend })
      if (this.down.size === 0) this.onStateChange(true)
    }
    return result
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}
