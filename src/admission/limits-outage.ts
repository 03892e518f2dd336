import type { Logger } from '../logger.ts'
import { ApiError } from '../errors/api-error.ts'

/**
 * Turns a failure of the limiter or the quota into 503 `limits_unavailable` with
 * `Retry-After: 1`, and logs an outage once when it starts and once when a call succeeds again,
 * not once per refused request.
 */
export class LimitsOutage {
  private down = false

  constructor(
    private readonly logger: Logger,
    private readonly onStateChange: (up: boolean) => void = () => {},
  ) {}

  async guard<T>(call: () => Promise<T>): Promise<T> {
    let result: T
    try {
      result = await call()
    } catch (error) {
      if (!this.down) {
        this.down = true
        this.logger.error('limits_unavailable', { error: describe(error) })
        this.onStateChange(false)
      }
      throw new ApiError(
        'limits_unavailable',
        'The rate limits cannot be checked right now, so the request was not served; retry in a second.',
        {},
        { 'Retry-After': '1' },
      )
    }
    if (this.down) {
      this.down = false
      this.logger.info('limits_recovered')
      this.onStateChange(true)
    }
    return result
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}
