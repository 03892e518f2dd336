import type { BunPlugin } from 'bun'
import { dirname, join, relative, resolve } from 'node:path'
import { buildOpenApiDocument, type DocumentedLimits } from '../openapi/document.ts'
import { compressedAsset } from './compressed-asset.ts'
import type { OpenRoute } from '../http/pipeline.ts'
import { prebuiltScript, swaggerUiFile, webFile } from './served-files.ts'

const WEB = import.meta.dir

/**
 * Nothing on these pages comes from another host: scripts, styles and API calls are same-origin.
 * Swagger UI sets inline styles, hence 'unsafe-inline' for styles only.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

const STYLESHEETS = ['app.css', 'docs.css']

const SOURCE_ROOT = join(WEB, '..')
const CLIENT_ENTRY = join(SOURCE_ROOT, 'client', 'index.ts')

/**
 * The scripts served as /assets/<name>, each bundled from its TypeScript entry point: the
 * project's client (src/client/), the export page, the charts' worker and drawing (loaded when
 * the analyst asks for charts; the charting library is bundled into the latter) and the API
 * reference's script.
 */
const SCRIPTS: Record<string, string> = {
  'client.js': CLIENT_ENTRY,
  'app.js': join(WEB, 'app.ts'),
  'charts-worker.js': join(WEB, 'charts', 'worker.ts'),
  'charts-view.js': join(WEB, 'charts', 'view.ts'),
  'xlsx-worker.js': join(WEB, 'xlsx', 'worker.ts'),
  'docs.js': join(WEB, 'docs.ts'),
}
const SCRIPT_NAMES = new Map(Object.entries(SCRIPTS).map(([name, entry]) => [entry, name]))

/**
 * Bun.build plugin: a page module's import of another served script (the client, the charts'
 * view) stays an import of its URL, /assets/<name>: the page calls the API through the very
 * module that loaders use, loaded once, and the charting library loads only with the charts.
 */
const servedScriptsAsModules: BunPlugin = {
  name: 'served-scripts-as-modules',
  setup(build) {
    build.onResolve({ filter: /\.ts$/ }, (args) => {
      if (!args.importer.startsWith(WEB)) return undefined
      const name = SCRIPT_NAMES.get(resolve(dirname(args.importer), args.path))
      return name ? { path: `./${name}`, external: true } : undefined
    })
  },
}

/** How the scripts are built: minified (it halves them), as browser modules. */
export const SCRIPT_BUILD = { target: 'browser', format: 'esm', minify: true } as const

/**
 * The scripts above, built by one Bun.build on the first request for any of them and kept (a
 * failed build is tried again by the next request). The server needs no build step of its own;
 * the compiled file serves the ones built into it.
 */
function scriptBundles(): (name: string) => (context: { request: Request }) => Promise<Response> {
  let built: Promise<Map<string, string>> | undefined
  const build = async () => {
    const result = await Bun.build({ entrypoints: Object.values(SCRIPTS), ...SCRIPT_BUILD, plugins: [servedScriptsAsModules] })
    if (!result.success) throw new AggregateError(result.logs, 'the page scripts did not build')
    // Outputs come in no set order, each at its entry point's path under the common root (src/).
    const outputOf = (entry: string) => {
      const path = relative(SOURCE_ROOT, entry).replace(/\.ts$/, '.js')
      const output = result.outputs.find((candidate) => candidate.kind === 'entry-point' && join(candidate.path) === path)
      if (!output) throw new Error(`the build made no ${path}`)
      return output.text()
    }
    return new Map(await Promise.all(Object.entries(SCRIPTS).map(async ([name, entry]) => [name, await outputOf(entry)] as const)))
  }
  const bundle = async (name: string) => {
    const prebuilt = prebuiltScript(name)
    if (prebuilt !== undefined) return Bun.file(prebuilt).bytes()
    built ??= build().catch((error) => {
      built = undefined // a later request tries again
      throw error
    })
    return new TextEncoder().encode((await built).get(name))
  }
  return (name) => compressedAsset(() => bundle(name), assetHeaders('text/javascript; charset=utf-8'))
}

function assetHeaders(type: string): Record<string, string> {
  return { 'Content-Type': type, 'Cache-Control': 'no-cache', 'Content-Security-Policy': CONTENT_SECURITY_POLICY }
}

/** A script or stylesheet file, gzipped for the clients that accept it. */
function compressedFile(path: string, type: string) {
  return compressedAsset(() => Bun.file(path).bytes(), assetHeaders(type))
}

function asset(path: string, type: string): () => Response {
  const file = Bun.file(path)
  return () => new Response(file, { headers: assetHeaders(type) })
}

/** The pages outside /v1 (docs/api.md#pages-outside-v1): the export page, the API reference, the OpenAPI document. */
export function webRoutes(limits: DocumentedLimits): OpenRoute[] {
  const document = JSON.stringify(buildOpenApiDocument(limits))
  const script = scriptBundles()
  return [
    { path: '/', handler: asset(webFile('index.html'), 'text/html; charset=utf-8') },
    { path: '/docs', handler: asset(webFile('docs.html'), 'text/html; charset=utf-8') },
    // Browsers ask for /favicon.ico on every page whatever the page links: answer it rather than 404.
    { path: '/favicon.ico', handler: asset(webFile('favicon.ico'), 'image/x-icon') },
    { path: '/assets/swagger-ui/swagger-ui.css', handler: compressedFile(swaggerUiFile('swagger-ui.css'), 'text/css; charset=utf-8') },
    { path: '/assets/swagger-ui/swagger-ui-bundle.js', handler: compressedFile(swaggerUiFile('swagger-ui-bundle.js'), 'text/javascript; charset=utf-8') },
    { path: '/openapi.json', handler: () => new Response(document, { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' } }) },
    ...Object.keys(SCRIPTS).map((name) => ({ path: `/assets/${name}`, handler: script(name) })),
    ...STYLESHEETS.map((name) => ({ path: `/assets/${name}`, handler: compressedFile(webFile(name), 'text/css; charset=utf-8') })),
  ]
}
