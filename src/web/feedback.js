// Where the page tells the analyst what happened: one alert region next to each place where they
// act (the token, the dates, the action buttons), one polite status line for progress. Only one
// alert shows at a time, and it is scrolled into view: a message below the fold is a message unseen.

import { ApiResponseError } from './api.js'

/**
 * @param {{ regions: Record<string, HTMLElement>, progress: HTMLElement }} elements
 *   `regions` are role="alert" elements, hidden while empty; `progress` is a role="status" line.
 */
export function createFeedback({ regions, progress }) {
  let countdown = null

  function clear() {
    clearInterval(countdown)
    for (const region of Object.values(regions)) {
      region.hidden = true
      region.textContent = ''
    }
  }

  /** Shows `text` in `region` (an error unless `kind` says 'info'), and brings it into view. */
  function show(region, text, kind = 'error') {
    clear()
    const element = regions[region]
    element.className = `message ${kind}`
    element.textContent = text
    element.hidden = false
    element.scrollIntoView({ block: 'nearest' })
  }

  /** A countdown from Retry-After, after `reason`, that ends in a plain (not red) "try again now". */
  function countDown(region, seconds, reason = 'Too many requests in the last minute.') {
    const element = regions[region]
    const wait = (s) => `${reason} You can try again in ${s} second${s === 1 ? '' : 's'}.`
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

  /** Turns a failure into a sentence a person understands, shown in `region`. */
  function explain(error, region) {
    if (error?.name === 'AbortError') return show(region, 'The download was cancelled.', 'info')
    if (error?.name === 'UnexpectedResponseError') return show(region, `Something went wrong on the server (HTTP ${error.status}).`)
    if (!(error instanceof ApiResponseError)) return show(region, 'The server could not be reached. Check your connection and try again.')
    const { status, body } = error
    if (status === 401) return show(region, 'This token was not accepted: it may be mistyped, revoked, or from another installation. Paste a current token.')
    if (status === 402) return show(region, 'The API feature is not enabled for the organisation of this token. Ask an administrator to enable it.')
    if (status === 400) return show(region, `The request was not accepted: ${body.message ?? 'invalid parameters.'}`)
    if (status === 503) return show(region, "The organisation's data cannot be read right now. Please try again in a few minutes.")
    if (status === 429 && body.error === 'demo_quota_exceeded') {
      const at = new Date(body.resetAt)
      return show(region, `This demo organisation has used its ${body.limit} requests for today. The quota resets at ${at.toLocaleString()} (your local time).`)
    }
    if (status === 429 && body.error === 'too_many_exports') {
      return countDown(region, Number(body.retryAfter ?? 1), 'Other downloads with this token are still running, and only a few may run at once.')
    }
    if (status === 429) return countDown(region, Number(body.retryAfter ?? 1))
    return show(region, `Something went wrong on the server (HTTP ${status}). Request id: ${body.requestId ?? 'unknown'}.`)
  }

  return {
    show,
    clear,
    explain,
    /** The polite status line: progress and results, never errors. */
    progress(text) {
      progress.textContent = text
    },
  }
}
