import { IN_COMPILED_FILE } from '../web/served-files.ts'

/** The commands whose usage names how they were invoked. */
export type Command = 'serve' | 'admin' | 'sync' | 'health' | 'duckdb'

const FROM_SOURCE: Record<Command, { npm: string; file: string }> = {
  serve: { npm: 'npm start --', file: 'bun src/main.ts' },
  admin: { npm: 'npm run -s admin --', file: 'bun src/cli/admin.ts' },
  sync: { npm: 'npm run -s sync --', file: 'bun src/sync/cli.ts' },
  health: { npm: 'queue-api health', file: 'queue-api health' },
  duckdb: { npm: 'npm run -s duckdb --', file: 'bun src/sync/query-cli.ts' },
}

/**
 * How `command` was invoked, for its usage to show commands that work as typed: `queue-api admin`
 * in the compiled file; `npm run -s admin --` under npm (which names the script it runs in
 * npm_lifecycle_event); `bun src/cli/admin.ts` run directly from a checkout.
 */
export function invokedAs(command: Command, env: Record<string, string | undefined> = process.env, compiled = IN_COMPILED_FILE): string {
  if (compiled) return command === 'serve' ? 'queue-api' : `queue-api ${command}`
  const lifecycle = env.npm_lifecycle_event
  const underNpm = lifecycle === (command === 'serve' ? 'start' : command)
  return underNpm ? FROM_SOURCE[command].npm : FROM_SOURCE[command].file
}
