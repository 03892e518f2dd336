import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'

/**
 * Every relative link of README.md and docs/*.md resolves: the file exists inside the
 * repository, and a `#anchor` names a heading of the target file, slugged as GitHub does.
 * Code comments cite these anchors, so a renamed heading must fail here, not on a reader.
 */

const ROOT = resolve(import.meta.dir, '..', '..')
const DOC_FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]

/** The lines of a Markdown text outside fenced code blocks. */
function linesOutsideCode(markdown: string): string[] {
  const lines: string[] = []
  let fence: string | null = null
  for (const line of markdown.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = null
    } else if (marker !== undefined) {
      fence = marker
    } else {
      lines.push(line)
    }
  }
  return lines
}

/** GitHub's heading anchor: the heading's text, lower-cased, punctuation dropped, spaces as '-'. */
function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts by its text
    .replace(/<[^>]*>/g, '') // inline HTML tags
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors a file offers: one per heading (repeats get -1, -2, …), and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of linesOutsideCode(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1]
    if (heading !== undefined) {
      const base = githubSlug(heading)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      anchors.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!)
  }
  return anchors
}

/** Link targets of a file: inline links and images, and reference definitions. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = []
  for (const raw of linesOutsideCode(markdown)) {
    // Inline code spans are blanked: a link written inside one is not a link.
    const line = raw.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length))
    for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push(match[1]!.replace(/^<|>$/g, ''))
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/.exec(line)
    if (definition) targets.push(definition[1]!.replace(/^<|>$/g, ''))
  }
  return targets
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')

/** What is wrong with a relative link of `file`, or null when it resolves. */
function checkLink(file: string, target: string): string | null {
  const hash = target.indexOf('#')
  const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1))
  const resolved = pathPart === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), pathPart)
  const inside = relative(ROOT, resolved)
  if (inside.startsWith('..') || isAbsolute(inside)) return `${target}: leaves the repository`
  if (!existsSync(resolved)) return `${target}: no such file`
  if (anchor === null) return null
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`
  if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) return `${target}: no heading with the anchor #${anchor} in ${inside}`
  return null
}

describe('GitHub heading anchors', () => {
  test.each([
    ['Query parameters', 'query-parameters'],
    ['What admin migrate does', 'what-admin-migrate-does'],
    ['Pages outside /v1', 'pages-outside-v1'],
    ['`from` and `to`', 'from-and-to'],
    ["The administration application's contract", 'the-administration-applications-contract'],
    ['Running more than one process (coming)', 'running-more-than-one-process-coming'],
    ['Café Nord: 2 desks', 'café-nord-2-desks'],
    ['See [the API](docs/api.md)', 'see-the-api'],
  ])('%p → %p', (heading, slug) => {
    expect(githubSlug(heading)).toBe(slug)
  })

  test('a repeated heading gets -1, -2; headings inside code blocks do not count', () => {
    const anchors = anchorsOf('# Notes\n## Notes\n```md\n# Hidden\n```\n## Notes\n')
    expect([...anchors].sort()).toEqual(['notes', 'notes-1', 'notes-2'])
  })
})

describe('relative links of the documentation', () => {
  test.each(DOC_FILES)('%s: every relative link resolves', (file) => {
    const broken = linkTargets(readFileSync(join(ROOT, file), 'utf8'))
      .filter((target) => !isExternal(target))
      .map((target) => checkLink(file, target))
      .filter((problem) => problem !== null)
    expect(broken).toEqual([])
  })

  test('the README links to every file of docs/', () => {
    const readmeTargets = new Set(linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((target) => target.split('#')[0]))
    for (const file of DOC_FILES.filter((name) => name.startsWith('docs/'))) expect(readmeTargets).toContain(file)
  })

  test('links inside code are not links', () => {
    expect(linkTargets('Run `[x](nowhere.md)` here.\n```\n[y](nowhere.md)\n```\n[z](docs/api.md)')).toEqual(['docs/api.md'])
  })
})

/** Every file of a folder, recursively. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
}

describe('documentation cited by the code', () => {
  test('every docs/ or README anchor named in src/, test/ and bench/ resolves', () => {
    const broken: string[] = []
    for (const file of ['src', 'test', 'bench'].flatMap(filesUnder).filter((name) => /\.(ts|js|html)$/.test(name) && !name.endsWith('docs-links.test.ts'))) {
      for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(/(?<![\w/.])((?:docs\/[\w-]+|README)\.md(?:#[\w-]+)?)/g)) {
        const problem = checkLink('README.md', match[1]!)
        if (problem) broken.push(`${file}: ${problem}`)
      }
    }
    expect(broken).toEqual([])
  })
})

describe('the size of the documentation', () => {
  /**
   * Each page has its own budget, about 10 % above its size when the budget was last set, so a
   * change that adds a documented line passes while a page that keeps growing fails on itself
   * (trim what the change made stale, or move history to docs/decisions/). The total is the
   * project's aim for a reader: about 110 KB, with some headroom.
   */
  const KB = 1024
  const PAGE_BUDGETS: Record<string, number> = {
    'README.md': 13 * KB,
    'docs/api.md': 22 * KB,
    'docs/architecture.md': 11 * KB,
    'docs/contract-suite.md': 6.5 * KB,
    'docs/loading.md': 16.5 * KB,
    'docs/operations.md': 32.5 * KB,
    'docs/page.md': 11.5 * KB,
    'docs/performance.md': 11.5 * KB,
  }
  const TOTAL_BUDGET = 115 * KB

  test('every page has a budget', () => {
    expect(DOC_FILES.filter((file) => PAGE_BUDGETS[file] === undefined)).toEqual([])
  })

  test.each(DOC_FILES.filter((file) => PAGE_BUDGETS[file] !== undefined))('%s stays within its budget', (file) => {
    expect(statSync(join(ROOT, file)).size).toBeLessThanOrEqual(PAGE_BUDGETS[file]!)
  })

  test('README.md and docs/*.md stay within 115 KB together (docs/decisions/ apart)', () => {
    const bytes = DOC_FILES.reduce((total, file) => total + statSync(join(ROOT, file)).size, 0)
    expect(bytes).toBeLessThanOrEqual(TOTAL_BUDGET)
  })
})
