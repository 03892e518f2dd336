import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

// The layering rules of docs/architecture.md#layering, checked on the source itself.

const ROOT = resolve(import.meta.dir, '../..')
const SRC = join(ROOT, 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') ? [path] : []
  })
}

/**
 * The relative imports of a file that exist at run time: `import type` and `export type` are
 * erased by the compiler and cannot make a cycle of module evaluation.
 */
export function runtimeImports(text: string): string[] {
  const found: string[] = []
  const statement = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm
  for (const match of text.matchAll(statement)) {
    if (match[2] === undefined) found.push(match[3]!)
  }
  // Dynamic imports load a module later, when called; they still belong to the graph.
  for (const match of text.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) found.push(match[1]!)
  return found
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(SRC)) {
    const from = relative(ROOT, file)
    const targets = runtimeImports(readFileSync(file, 'utf8')).map((spec) => relative(ROOT, resolve(dirname(file), spec)))
    graph.set(from, targets)
  }
  return graph
}

/** One cycle of the graph as a list of files (first repeated at the end), or null when there is none. */
export function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  function visit(node: string): string[] | null {
    if (state.get(node) === 'done') return null
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node]
    state.set(node, 'open')
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next)
      if (cycle) return cycle
    }
    path.pop()
    state.set(node, 'done')
    return null
  }
  for (const node of graph.keys()) {
    const cycle = visit(node)
    if (cycle) return cycle
  }
  return null
}

function folderOf(file: string): string {
  return file.split('/')[1]!
}

describe('the parser and the cycle finder', () => {
  test('type-only imports are left out; value, re-export and dynamic imports are kept', () => {
    const text = [
      "import type { A } from './a.ts'",
      "import { B } from './b.ts'",
      "export { C } from '../c.ts'",
      "export type { D } from './d.ts'",
      "import './e.ts'",
      "const f = await import('./f.ts')",
      "import { G } from 'elysia'",
    ].join('\n')
    expect(runtimeImports(text)).toEqual(['./b.ts', '../c.ts', './e.ts', './f.ts'])
  })

  test('finds a cycle, and none where there is none', () => {
    expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', []]]))).toBeNull()
    expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual(['a', 'b', 'c', 'a'])
  })
})

describe('layering of src/', () => {
  const graph = importGraph()

  test('no module imports one that imports it back (no cycle of runtime imports)', () => {
    expect(findCycle(graph)).toBeNull()
  })

  /** The modules of src/web/ that run in the server, never in the browser. */
  const WEB_SERVER_SIDE = ['src/web/routes.ts', 'src/web/compressed-asset.ts']
  const allowed: Record<string, readonly string[]> = {
    // The contract depends on nothing of the server, so the client and the page can use it.
    contract: ['contract'],
    // The client runs in browsers and Node: the contract and nothing else of ours.
    client: ['client', 'contract'],
    // The page's scripts run in the browser: the client and the contract, nothing of the server.
    web: ['web', 'client', 'contract'],
  }
  for (const [folder, may] of Object.entries(allowed)) {
    test(`src/${folder}/ imports only from ${may.map((name) => `src/${name}/`).join(', ')}`, () => {
      const outside = [...graph]
        .filter(([from]) => folderOf(from) === folder)
        .flatMap(([from, targets]) => targets.filter((to) => !may.includes(folderOf(to))).map((to) => `${from} -> ${to}`))
      // The web folder's server side (the routes that serve the page, and their compression)
      // is the one exception.
      expect(outside.filter((edge) => !WEB_SERVER_SIDE.some((file) => edge.startsWith(`${file} `)))).toEqual([])
    })
  }
})
