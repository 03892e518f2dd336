import { acceptsGzip } from '../export/accept-encoding.ts'

/**
 * A script or stylesheet of the pages, served gzipped to every client that accepts it. They are
 * most of the pages' bytes (Swagger UI's bundle alone is 1.4 MB, the charts 0.3 MB), which an
 * analyst on a slow network pays for before the page works. The body is loaded and compressed
 * once, on its first request, through CompressionStream so that the event loop is never held
 * for it; a failed load is tried again by the next request.
 */
export function compressedAsset(load: () => Promise<Uint8Array<ArrayBuffer>>, headers: Record<string, string>): (context: { request: Request }) => Promise<Response> {
  let bodies: Promise<{ plain: Uint8Array<ArrayBuffer>; gzipped: Uint8Array<ArrayBuffer> }> | undefined
  const prepare = async () => {
    const plain = await load()
    const gzipped = await new Response(new Blob([plain]).stream().pipeThrough(new CompressionStream('gzip'))).bytes()
    return { plain, gzipped }
  }
  return async ({ request }) => {
    bodies ??= prepare().catch((error) => {
      bodies = undefined
      throw error
    })
    const { plain, gzipped } = await bodies
    // Caches keep one copy per encoding.
    const common = { ...headers, Vary: 'Accept-Encoding' }
    if (!acceptsGzip(request.headers.get('accept-encoding'))) return new Response(plain, { headers: common })
    return new Response(gzipped, { headers: { ...common, 'Content-Encoding': 'gzip' } })
  }
}
