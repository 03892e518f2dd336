import { Elysia } from 'elysia'
import { join, dirname } from 'node:path'
import { buildOpenApiDocument, type DocumentedLimits } from '../openapi/document.ts'

const WEB = import.meta.dir
const SWAGGER_UI = dirname(Bun.resolveSync('swagger-ui-dist/package.json', import.meta.dir))

/**
 * Nothing on these pages comes from another host: scripts, styles and API calls are same-origin.
 * Swagger UI sets inline styles, hence 'unsafe-inline' for styles only.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/** The export page's script modules (app.js imports the others), served from this folder as /assets/<name>. */
const PAGE_MODULES = ['app.js', 'api.js', 'feedback.js', 'range.js', 'places.js', 'preview.js', 'save.js', 'session.js', 'docs.js']
const STYLESHEETS = ['app.css', 'docs.css']

/**
 * The project's client (src/client/), bundled for the browser on first request and kept: the
 * export page calls the API through the same module that loaders use.
 */
function clientBundle(): () => Promise<Response> {
  let built: Promise<string> | undefined
  const build = async () => {
    const result = await Bun.build({ entrypoints: [join(WEB, '..', 'client', 'index.ts')], target: 'browser', format: 'esm' })
    if (!result.success) throw new AggregateError(result.logs, 'the client bundle did not build')
    return result.outputs[0]!.text()
  }
  return async () => {
    built ??= build().catch((error) => {
      built = undefined // a later request tries again
      throw error
    })
    return new Response(await built, {
      headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache', 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
    })
  }
}

function asset(path: string, type: string): () => Response {
  const file = Bun.file(path)
  return () =>
    new Response(file, {
      headers: { 'Content-Type': type, 'Cache-Control': 'no-cache', 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
    })
}

/** The pages outside /v1 (docs/api.md#pages-outside-v1): the export page, the API reference, the OpenAPI document. */
export function webRoutes(limits: DocumentedLimits) {
  const document = JSON.stringify(buildOpenApiDocument(limits))
  const routes = new Elysia({ name: 'web' })
    .get('/', asset(join(WEB, 'index.html'), 'text/html; charset=utf-8'))
    .get('/docs', asset(join(WEB, 'docs.html'), 'text/html; charset=utf-8'))
    // Browsers ask for /favicon.ico on every page whatever the page links: answer it rather than 404.
    .get('/favicon.ico', asset(join(WEB, 'favicon.ico'), 'image/x-icon'))
    .get('/assets/swagger-ui/swagger-ui.css', asset(join(SWAGGER_UI, 'swagger-ui.css'), 'text/css; charset=utf-8'))
    .get('/assets/swagger-ui/swagger-ui-bundle.js', asset(join(SWAGGER_UI, 'swagger-ui-bundle.js'), 'text/javascript; charset=utf-8'))
    .get('/assets/client.js', clientBundle())
    .get('/openapi.json', () => new Response(document, { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' } }))
  // Elysia's .get() adds the route to the instance itself (it returns `this`, with a wider type).
  for (const name of PAGE_MODULES) routes.get(`/assets/${name}`, asset(join(WEB, name), 'text/javascript; charset=utf-8'))
  for (const name of STYLESHEETS) routes.get(`/assets/${name}`, asset(join(WEB, name), 'text/css; charset=utf-8'))
  return routes
}
