/**
 * Copies a worker's log to this process's stdout in whole lines, so that the lines of two
 * workers never interleave inside one line (a pipe makes only writes of up to 4 KiB atomic).
 */
export async function relayLines(stream: ReadableStream<Uint8Array>): Promise<void> {
  const decoder = new TextDecoder()
  const reader = stream.getReader()
  let pending = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    pending += decoder.decode(value, { stream: true })
    const end = pending.lastIndexOf('\n')
    if (end < 0) continue
    process.stdout.write(pending.slice(0, end + 1))
    pending = pending.slice(end + 1)
  }
  if (pending) process.stdout.write(pending + '\n')
}
