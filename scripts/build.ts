import type { BunPlugin } from 'bun'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { webRoutes } from '../src/web/routes.ts'
import { createRequestContext } from '../src/http/context.ts'
import { EMBEDDED_DIR, swaggerUiDirectory } from '../src/web/served-files.ts'
import { revisionOfCheckout } from '../src/metrics/build-info.ts'

/**
 * `npm run -s build`: writes dist/queue-api, one executable holding the server, the admin and sync
 * commands, and every file the pages serve (src/web/served-files.ts reads them back). The page
 * scripts are built here, through the routes that serve them from a checkout, so that the
 * compiled file serves the same bytes. `--outfile <path>` writes it elsewhere.
 */

const ROOT = join(import.meta.dir, '..')
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js']

let outfile: string
try {
  const { values } = parseArgs({ options: { outfile: { type: 'string' } }, strict: true })
  outfile = resolve(values.outfile ?? join(ROOT, 'dist', 'queue-api'))
} catch (error) {
  console.error(`build: ${(error as Error).message} (the one option is --outfile <path>)`)
  process.exit(2)
}
/** DuckDB's library for this machine (the compiled file runs where it was built: same OS and CPU). */
const DUCKDB_BINDINGS = `@duckdb/node-bindings-${process.platform}-${process.arch}`

/**
 * The directory the compiled file embeds, its layout the one src/web/served-files.ts reads. Bun
 * embeds a directory under its path relative to the working directory, so it is gathered in a
 * temporary directory of its own that the build then runs in (two builds never share it).
 */
const WORKDIR = mkdtempSync(join(tmpdir(), 'queue-api-build-'))
const STAGE = join(WORKDIR, EMBEDDED_DIR)

/** Copies `file` into the stage's `part` directory. */
async function stage(part: string, file: string, bytes: Blob | Uint8Array = Bun.file(file)): Promise<void> {
  await Bun.write(join(STAGE, part, basename(file)), bytes)
}

/** Each page script as its route serves it from source. */
async function stagePageScripts(): Promise<void> {
  const routes = webRoutes({ ratePerMinute: 60, demoPerDay: 50 })
  const scripts = routes.filter((route) => /^\/assets\/[^/]+\.js$/.test(route.path))
  for (const { path, handler } of scripts) {
    const response = await handler(createRequestContext(new Request(`http://build${path}`)))
    if (response.status !== 200) throw new Error(`${path} did not build: ${response.status} ${await response.text()}`)
    await stage('scripts', path, await response.bytes())
  }
}

/** The files of src/web/ served as they are: pages, stylesheets, the icon (the TypeScript is bundled instead). */
async function stagePageFiles(): Promise<void> {
  const web = join(ROOT, 'src', 'web')
  for (const entry of readdirSync(web, { withFileTypes: true })) {
    if (entry.isFile() && !entry.name.endsWith('.ts')) await stage('web', join(web, entry.name))
  }
}

/**
 * DuckDB's bindings require the native module of every platform by name, and npm installs only
 * this machine's: the others are left to fail at run time, where they are never reached.
 */
const otherPlatformsBindings: BunPlugin = {
  name: 'other-platforms-bindings',
  setup(build) {
    build.onResolve({ filter: /^@duckdb\/node-bindings-[^/]+\/duckdb\.node$/ }, (args) => {
      try {
        Bun.resolveSync(args.path, args.resolveDir)
        return undefined
      } catch {
        return { path: args.path, external: true }
      }
    })
  },
}

let result
try {
  await stagePageFiles()
  await stagePageScripts()
  for (const name of SWAGGER_UI_FILES) await stage('swagger-ui', join(swaggerUiDirectory(ROOT), name))
  await stage('lib', join(dirname(Bun.resolveSync(`${DUCKDB_BINDINGS}/package.json`, ROOT)), 'libduckdb.so'))
  process.chdir(WORKDIR)
  result = await Bun.build({
    entrypoints: [join(ROOT, 'src', 'cli', 'queue-api.ts')],
    compile: { outfile, assets: [EMBEDDED_DIR], autoloadBunfig: false },
    define: { QUEUE_API_REVISION: JSON.stringify(revisionOfCheckout(ROOT)) },
    minify: true,
    plugins: [otherPlatformsBindings],
  })
} finally {
  rmSync(WORKDIR, { recursive: true, force: true })
}
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log(`wrote ${relative(ROOT, outfile)}`)
