import { readFileSync } from 'node:fs'

/** The first ```sh block after `marker` in a documentation file: a snippet to run as a reader pastes it. */
export function shellSnippet(file: string, marker: string): string {
  const text = readFileSync(file, 'utf8')
  const at = text.indexOf(marker)
  const block = at < 0 ? null : /```sh\n([\s\S]*?)```/.exec(text.slice(at))
  if (!block) throw new Error(`${file} no longer shows a shell snippet after "${marker}"`)
  return block[1]!
}
