// Where the page tells the analyst what happened: one alert region next to each place where they
// act (the token, the dates, the action buttons), one polite status line for progress. Only one
// alert shows at a time, and it is scrolled into view: a message below the fold is a message unseen.

import { ApiResponseError, DemoQuotaExceededError, RateLimitedError, TooManyExportsError, UnexpectedResponseError } from '../client/index.ts'

export type MessageKind = 'error' | 'info'

/** The export page's alert regions: next to the token, the dates, the time zone, and the action buttons. */
export type PageRegion = 'token' | 'range' | 'zone' | 'query'

/** "A, B and C", or the first three and how many more. */
export function listNames(names: string[]): string {
  if (names.length <= 3) return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]!
  return `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`
}

/** A size as a progress line says it: 812.4 kB, 35.3 MB. */
export function formatBytes(bytes: number): string {
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`
}

export interface Feedback<Region extends string> {
  /** Shows `text` in `region` (an error unless `kind` says 'info'), and brings it into view. */
  show(region: Region, text: string, kind?: MessageKind): void
  clear(): void
  /** Hides `region`'s message, if it shows one (the others stay). */
  dismiss(region: Region): void
  /** Turns a failure into a sentence a person understands, shown in `region`. */
  explain(error: unknown, region: Region): void
  /** The polite status line: progress and results, never errors. */
  progress(text: string): void
}

/**
 * `regions` are role="alert" elements, hidden while empty; `progress` is a role="status" line.
 */
export function createFeedback<Region extends string>({ regions, progress }: { regions: Record<Region, HTMLElement>; progress: HTMLElement }): Feedback<Region> {
  let countdown: ReturnType<typeof setInterval> | undefined

  function clear() {
    clearInterval(countdown)
    for (const region of Object.values<HTMLElement>(regions)) {
      region.hidden = true
      region.textContent = ''
    }
  }

  function show(region: Region, text: string, kind: MessageKind = 'error') {
    clear()
    const element = regions[region]
    element.className = `message ${kind}`
    element.textContent = text
    element.hidden = false
    element.scrollIntoView({ block: 'nearest' })
  }

  /** A countdown from Retry-After, after `reason`, that ends in a plain (not red) "try again now". */
  function countDown(region: Region, seconds: number, reason = 'Too many requests in the last minute.') {
    const element = regions[region]
    const wait = (s: number) => `${reason} You can try again in ${s} second${s === 1 ? '' : 's'}.`
    // The whole sentence is in place before the region is scrolled into view.
    show(region, wait(seconds))
    countdown = setInterval(() => {
      seconds--
      if (seconds > 0) {
        element.textContent = wait(seconds)
      } else {
        element.textContent = 'You can try again now.'
        element.className = 'message info'
        clearInterval(countdown)
      }
    }, 1000)
  }

  function explain(error: unknown, region: Region) {
    if ((error as Error | undefined)?.name === 'AbortError') return show(region, 'The download was cancelled.', 'info')
    if (error instanceof UnexpectedResponseError) return show(region, `Something went wrong on the server (HTTP ${error.status}).`)
    if (!(error instanceof ApiResponseError)) return show(region, 'The server could not be reached. Check your connection and try again.')
    const { status, body } = error
    if (status === 401) return show(region, 'This token was not accepted: it may be mistyped, revoked, or from another installation. Paste a current token.')
    if (status === 402) return show(region, 'The API feature is not enabled for the organisation of this token. Ask an administrator to enable it.')
    if (status === 400) return show(region, `The request was not accepted: ${body.message ?? 'invalid parameters.'}`)
    if (status === 503) return show(region, "The organisation's data cannot be read right now. Please try again in a few minutes.")
    if (error instanceof DemoQuotaExceededError) {
      const at = new Date(error.resetAt)
      return show(region, `This demo organisation has used its ${error.limit} requests for today. The quota resets at ${at.toLocaleString()} (your local time).`)
    }
    if (error instanceof TooManyExportsError) {
      return countDown(region, error.retryAfterSeconds, 'Other downloads are still running, with this token or on the server, and only a few may run at once.')
    }
    if (error instanceof RateLimitedError) return countDown(region, error.retryAfterSeconds)
    return show(region, `Something went wrong on the server (HTTP ${status}). Request id: ${body.requestId ?? 'unknown'}.`)
  }

  return {
    show,
    clear,
    dismiss(region) {
      regions[region].hidden = true
      regions[region].textContent = ''
    },
    explain,
    progress(text) {
      progress.textContent = text
    },
  }
}
