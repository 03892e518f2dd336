import { dlopen } from 'bun:ffi'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { embeddedLibrary, IN_COMPILED_FILE } from '../web/served-files.ts'

const LIBRARY = 'libduckdb.so'

/**
 * DuckDB's Node module needs libduckdb.so beside it ($ORIGIN), but the compiled file's Bun writes
 * the module alone to a temporary file: so the library is loaded first, from a private directory
 * of its own, and the dynamic linker finds it by name. From a checkout nothing is done.
 */
export async function loadEmbeddedDuckdb(): Promise<void> {
  if (!IN_COMPILED_FILE) return
  const directory = mkdtempSync(join(tmpdir(), 'queue-api-duckdb-'))
  try {
    const path = join(directory, LIBRARY)
    await Bun.write(path, Bun.file(embeddedLibrary(LIBRARY)))
    dlopen(path, { duckdb_library_version: { args: [], returns: 'cstring' } })
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}
