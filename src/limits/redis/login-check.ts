/**
 * Why Redis closed a new connection, when it was the login: Bun's client reports a refused login
 * as "Connection closed", so one more connection sends `AUTH` (or `PING`) and reads the reply.
 * The answer names Redis's error code, never the password or anything else of the URL.
 */

/** One RESP command as bytes. */
function command(parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join('')}`
}

/** What each reply means for the login; undefined when the login is not the reason. */
function explain(reply: string, hasPassword: boolean): string | undefined {
  if (reply.startsWith('-WRONGPASS')) return 'authentication failed: Redis refused the user name or password of REDIS_URL (WRONGPASS)'
  if (reply.startsWith('-NOAUTH')) return 'authentication required: Redis asks for a password and REDIS_URL gives none (NOAUTH)'
  if (hasPassword && reply.startsWith('-ERR AUTH')) return 'authentication failed: REDIS_URL gives a password but Redis has none configured (ERR AUTH)'
  return undefined
}

/**
 * Connects to the Redis of `url` once more and says whether a refused login explains a closed
 * connection; undefined when it does not (or the check itself could not be made).
 */
export async function loginFailure(url: string, timeoutMs: number): Promise<string | undefined> {
  const parsed = new URL(url)
  const user = decodeURIComponent(parsed.username)
  const password = decodeURIComponent(parsed.password)
  const ask = password ? command(['AUTH', ...(user ? [user] : []), password]) : command(['PING'])
  let answer!: (reply: string) => void
  const replied = new Promise<string>((resolve) => (answer = resolve))
  const timer = setTimeout(() => answer(''), timeoutMs)
  try {
    // The connect itself is bounded too: a Redis gone silent must not hold every request's admission.
    const connecting = Bun.connect({
      hostname: parsed.hostname.replace(/^\[|\]$/g, ''),
      port: Number(parsed.port || 6379),
      tls: parsed.protocol === 'rediss:',
      socket: {
        data: (_socket, data) => answer(data.toString('latin1')),
        close: () => answer(''),
        error: () => answer(''),
        connectError: () => answer(''),
      },
    })
    const socket = await Promise.race([connecting, replied.then(() => undefined)])
    if (!socket) {
      void connecting.then((late) => late.end(), () => {})
      return undefined
    }
    socket.write(ask)
    const reply = await replied
    socket.end()
    return explain(reply, password !== '')
  } catch {
    return undefined
  } finally {
    clearTimeout(timer)
  }
}
