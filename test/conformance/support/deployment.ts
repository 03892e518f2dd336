import { tempDataDir } from '../../support/harness.ts'
import { startServerProcess, type ServerProcess } from '../../support/server-process.ts'

/**
 * A deployment as an operator makes one: a data directory prepared with the admin CLI in its
 * documented form (`npm run -s admin -- … --json`), and the server started as a process of its
 * own on a free port. It has every organisation the suite's optional tokens need.
 */
export interface Deployment {
  server: ServerProcess
  dataDir: string
  /** Tokens of the paid organisation, one per run of the suite, so that no run waits for another's window. */
  mainTokens: { id: string; token: string }[]
  demo: { id: string; token: string }
  disabled: { id: string; token: string }
  revoked: { id: string; token: string }
  stop(): Promise<void>
}

/** Runs `npm run -s admin -- <argv>` and returns its one JSON document; throws with stderr on failure. */
async function admin(dataDir: string, argv: string[]): Promise<Record<string, unknown>> {
  const child = Bun.spawn(['npm', 'run', '-s', 'admin', '--', ...argv, '--json'], { env: { ...process.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (status !== 0) throw new Error(`admin ${argv.join(' ')} exited ${status}: ${stderr}`)
  return JSON.parse(stdout) as Record<string, unknown>
}

export async function startDeployment(runs: number): Promise<Deployment> {
  const { dir: dataDir, cleanup } = tempDataDir()
  try {
    await admin(dataDir, ['org', 'create', '--name', 'Paid Organisation', '--slug', 'paid'])
    await admin(dataDir, ['org', 'create', '--name', 'Demo Organisation', '--slug', 'demo', '--demo'])
    await admin(dataDir, ['org', 'create', '--name', 'Organisation Without API', '--slug', 'no-api', '--api-disabled'])
    const token = async (org: string, name: string) => {
      const created = await admin(dataDir, ['token', 'create', '--org', org, '--name', name])
      return { id: created.id as string, token: created.token as string }
    }
    // Independent commands run side by side (the CLI waits for another's write lock): most of
    // each one's time is starting a process.
    const [mainTokens, revoked, demo, disabled] = await Promise.all([
      Promise.all(Array.from({ length: runs }, (_, run) => token('paid', `contract suite run ${run + 1}`))),
      token('paid', 'revoked'),
      token('demo', 'contract suite'),
      token('no-api', 'contract suite'),
      admin(dataDir, ['seed', '--org', 'paid', '--days', '30', '--per-day', '200', '--seed', 'contract-suite']),
      admin(dataDir, ['seed', '--org', 'demo', '--days', '3', '--per-day', '40', '--seed', 'contract-suite']),
    ])
    await admin(dataDir, ['token', 'revoke', revoked.id])
    const server = await startServerProcess({ DATA_DIR: dataDir })
    return {
      server,
      dataDir,
      mainTokens,
      demo,
      disabled,
      revoked,
      async stop() {
        await server.stop()
        cleanup()
      },
    }
  } catch (error) {
    cleanup()
    throw error
  }
}
