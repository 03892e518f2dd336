import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, posix, relative, resolve, sep } from 'node:path'

/**
 * The module map of docs/architecture.md matches the tree: every path it names exists, and
 * every folder of src/ has a row (a row naming the folder itself or a file directly in it).
 * A new folder therefore needs a row in the map, and a moved or deleted file fails here.
 */

const ROOT = resolve(import.meta.dir, '..', '..')
const ARCHITECTURE = 'docs/architecture.md'

/** The first cells of the table under "## Module map", one per row. */
function moduleMapCells(markdown: string): string[] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => /^##\s+Module map\s*$/.test(line))
  if (start === -1) return []
  const cells: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (/^##\s/.test(line)) break
    const cell = /^\|([^|]*)\|/.exec(line)?.[1]?.trim()
    if (cell === undefined || cell === 'path' || /^-+$/.test(cell)) continue
    cells.push(cell)
  }
  return cells
}

/**
 * The paths a cell names: its code spans, the first a path from the repository's root, the
 * others (`app.js` after `src/web/index.html`) names in the first one's folder.
 */
function pathsOfCell(cell: string): string[] {
  const spans = [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)
  const [first, ...rest] = spans
  if (first === undefined) return []
  const folder = first.endsWith('/') ? first : posix.dirname(first)
  return [first, ...rest.map((name) => (name.includes('/') ? name : posix.join(folder, name)))].map((path) => path.replace(/\/$/, ''))
}

/** Every folder under src/, as `src/…`. */
function sourceFolders(): string[] {
  return readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
}

/** The folders the map covers: each named folder, and the folder of each named file. */
function coveredFolders(paths: readonly string[]): Set<string> {
  const covered = new Set<string>()
  for (const path of paths) {
    const full = join(ROOT, path)
    covered.add(existsSync(full) && statSync(full).isDirectory() ? path : dirname(path))
  }
  return covered
}

describe('the module map of docs/architecture.md', () => {
  const paths = moduleMapCells(readFileSync(join(ROOT, ARCHITECTURE), 'utf8')).flatMap(pathsOfCell)

  test('it has rows', () => {
    expect(paths.length).toBeGreaterThan(20)
  })

  test('every path it names exists', () => {
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([])
  })

  test('every folder of src/ has a row', () => {
    const covered = coveredFolders(paths)
    expect(sourceFolders().filter((folder) => !covered.has(folder))).toEqual([])
  })
})

/** Every file under `dir` (recursively) whose name ends with `suffix`, as paths from the root. */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
}

describe('the statements of docs/architecture.md that the code can check', () => {
  const markdown = readFileSync(join(ROOT, ARCHITECTURE), 'utf8')

  test('the number of test files it states is the number there are', () => {
    const stated = /over the (\d+) test files/.exec(markdown)?.[1]
    expect(Number(stated)).toBe(filesUnder('test', '.test.ts').length)
  })

  test('the modules outside http/ that import from it are exactly those it lists', () => {
    const paragraph = markdown.split('\n\n').find((text) => text.includes('Outside `http/`, these'))!
    const listed = [...paragraph.matchAll(/`(src\/[^`]+\.ts)`/g)].map((match) => match[1]!).sort()
    const importing = filesUnder('src', '.ts').filter(
      // `./http/` (src/app.ts, src/main.ts) as well as `../http/`, and a dynamic import().
      (path) => !path.startsWith('src/http/') && /(?:from |import\()'(?:\.\.?\/)+http\//.test(readFileSync(join(ROOT, path), 'utf8')),
    )
    expect(listed).toEqual(importing)
  })
})

describe('reading the map', () => {
  test('a cell names its first path from the root, later bare names in its folder', () => {
    expect(pathsOfCell('`src/web/index.html`, `app.js`, `app.css`')).toEqual(['src/web/index.html', 'src/web/app.js', 'src/web/app.css'])
    expect(pathsOfCell('`src/limits/redis/`')).toEqual(['src/limits/redis'])
    expect(pathsOfCell('`scripts/install-chromium.sh`, `install-redis.sh`')).toEqual(['scripts/install-chromium.sh', 'scripts/install-redis.sh'])
  })

  test('only the table under "Module map" counts, its header and rule skipped', () => {
    const markdown = '# A\n| path | what |\n|---|---|\n| `x.ts` | no |\n## Module map\n\n| path | what |\n|---|---|\n| `src/a.ts` | a |\n| `src/b/` | b |\n\n## Next\n| `src/c.ts` | c |\n'
    expect(moduleMapCells(markdown)).toEqual(['`src/a.ts`', '`src/b/`'])
  })
})
