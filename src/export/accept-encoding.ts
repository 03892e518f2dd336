/** Whether an Accept-Encoding header admits gzip (`gzip`, `x-gzip` or `*`, with q > 0). */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';')
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    if (q === undefined || Number(q.slice(2)) > 0) return true
  }
  return false
}
