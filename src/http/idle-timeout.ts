import type { Server } from 'bun'

/**
 * Bun's idle timeout of a connection, per request: Bun counts a connection whose write waits on a
 * pausing reader as idle, and would cut an export long before its own stall rule. A response with
 * its own rule lifts the timeout while it streams and puts it back before its last byte.
 */
export interface IdleTimeout {
  /** No idle timeout for this request's connection until `restore`. */
  lift(request: Request): void
  /** The server's idle timeout again for this request's connection. */
  restore(request: Request): void
}

/** Bun's default `idleTimeout` in seconds, kept by `App.listen` unless a test shortens it. */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 10

/**
 * The idle timeout of whichever server is listening (none when the app answers `fetch` directly,
 * as some tests do). `server.timeout(request, 0)` lifts it for that request's connection; it
 * takes effect only while the response is still open, so `restore` must come before the close.
 */
export function serverIdleTimeout(server: () => Server<undefined> | undefined, seconds: () => number): IdleTimeout {
  return {
    lift: (request) => server()?.timeout(request, 0),
    restore: (request) => server()?.timeout(request, seconds()),
  }
}
