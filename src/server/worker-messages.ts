/**
 * What a worker tells its supervisor over the IPC channel Bun.spawn opens (JSON messages). The
 * supervisor learns that a worker serves from this message alone, never from its log, which a
 * LOG_LEVEL of warn or error leaves silent.
 */
interface ListeningMessage {
  type: 'listening'
}

/** In a worker: tells the supervisor that this process accepts connections (a no-op without a channel). */
export function announceListening(): void {
  const message: ListeningMessage = { type: 'listening' }
  process.send?.(message)
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return typeof message === 'object' && message !== null && (message as ListeningMessage).type === 'listening'
}
