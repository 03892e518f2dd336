import type { Server } from 'bun'

/**
 * How a server stops without failing a request. Once draining, every answer carries
 * `Connection: close`, so that a keep-alive client learns from its answer that it must open a
 * new connection (which reaches another worker, or this one while it still listens) instead of
 * finding its connection reset. The listener stays open for a moment first (`handoverMs`), so
 * that keep-alive clients that are paging hear it; then the server stops accepting (Bun closes
 * its idle connections), waits for what is in flight, and at the deadline ends the rest.
 */

/** How long a worker's drain keeps accepting, answering with `Connection: close`, before it stops listening. */
export const HANDOVER_MS = 1000

/** How long a worker whose supervisor is gone gives what is in flight before it exits (no handover: nobody else listens). */
export const ORPHAN_STOP_MS = 500

type Answer = (request: Request) => Promise<Response>

export interface Drainable {
  /** `answer` (a route's or the fallback fetch), with `Connection: close` on every response once `drain` has begun. */
  wrap(answer: Answer): Answer
  /**
   * Drains `server`: keeps accepting for `handoverMs`, then up to `drainMs` in all for requests
   * and exports in flight (`inFlight`); `onDeadline` is called when some are still running at
   * the deadline, before they are cut.
   */
  drain(server: Server<undefined>, options: { drainMs: number; handoverMs: number; inFlight: () => number; onDeadline: () => void }): Promise<void>
}

export function drainable(): Drainable {
  let draining = false
  const closing = (response: Response): Response => {
    try {
      response.headers.set('Connection', 'close')
      return response
    } catch {
      // Headers of a response made by Response.redirect() and the like are immutable: a copy's are not.
      const copy = new Response(response.body, response)
      copy.headers.set('Connection', 'close')
      return copy
    }
  }
  return {
    wrap: (answer) => (request) => (draining ? answer(request).then(closing) : answer(request)),
    async drain(server, { drainMs, handoverMs, inFlight, onDeadline }) {
      draining = true
      const deadline = Date.now() + drainMs
      if (handoverMs > 0) await Bun.sleep(Math.min(handoverMs, drainMs))
      void server.stop(false) // stop accepting; in-flight requests go on
      while (inFlight() > 0 && Date.now() < deadline) await Bun.sleep(20)
      if (inFlight() > 0) onDeadline()
      await server.stop(true)
    },
  }
}
