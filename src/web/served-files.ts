import { dirname, join } from 'node:path'

/**
 * Where the files the pages serve are read from. From the source tree: src/web/ and the
 * swagger-ui-dist package, the page scripts built from TypeScript on their first request. In the
 * compiled file (`npm run -s build`) none of these exist on disk: scripts/build.ts gathers them
 * into EMBEDDED_DIR (web/, swagger-ui/, scripts/ prebuilt, since the TypeScript is not inside),
 * which Bun serves from the executable under /$bunfs/root.
 */

/** True when running as the compiled file: every module's directory is then Bun's embedded root. */
export const IN_COMPILED_FILE = import.meta.dir.startsWith('/$bunfs/')

/** The directory the build embeds, found inside the executable under /$bunfs/root. */
export const EMBEDDED_DIR = 'queue-api-files'

function embedded(...parts: string[]): string {
  return join('/$bunfs/root', EMBEDDED_DIR, ...parts)
}

/** A file of src/web/ (a page, a stylesheet, the icon). */
export function webFile(name: string): string {
  return IN_COMPILED_FILE ? embedded('web', name) : join(import.meta.dir, name)
}

/** The swagger-ui-dist package's directory, as resolved from `from`. */
export function swaggerUiDirectory(from: string): string {
  return dirname(Bun.resolveSync('swagger-ui-dist/package.json', from))
}

/** A file of Swagger UI's distribution (its bundle and stylesheet). */
export function swaggerUiFile(name: string): string {
  return IN_COMPILED_FILE ? embedded('swagger-ui', name) : join(swaggerUiDirectory(import.meta.dir), name)
}

/** A page script as the build prebuilt it, or undefined when running from the source tree (built on demand). */
export function prebuiltScript(name: string): string | undefined {
  return IN_COMPILED_FILE ? embedded('scripts', name) : undefined
}

/** A native library the compiled file carries (DuckDB's, for `sync`). */
export function embeddedLibrary(name: string): string {
  return embedded('lib', name)
}
