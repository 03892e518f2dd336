import { dlopen } from 'bun:ffi'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { embeddedLibrary, IN_COMPILED_FILE } from '../web/served-files.ts'

const LIBRARY = 'libduckdb.so'

/**
 * DuckDB's Node module needs libduckdb.so beside it ($ORIGIN). In the compiled file Bun writes the
 * module alone to a temporary file before loading it, so the library is written out here and
 * loaded first: the dynamic linker then finds it already loaded by its name. A private directory
 * of its own each run (no other user can put a library there), removed once loaded. From a
 * checkout node_modules has both side by side, and nothing is done.
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
