import type { Subprocess } from 'bun'

export interface ServerProcess {
  base: string
  process: Subprocess<'ignore', 'pipe', 'pipe'>
  /** Everything the process wrote to stdout so far (its JSON log lines). */
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number>
}

/** How a test starts the server: from the checkout, or the compiled file with its working directory. */
export interface ServerCommand {
  argv: string[]
  cwd?: string
}

const FROM_SOURCE: ServerCommand = { argv: [process.execPath, 'src/main.ts'] }

/** Starts the server (`bun src/main.ts` unless told otherwise) as a real separate process on a free port and waits until it listens. */
export async function startServerProcess(env: Record<string, string>, command: ServerCommand = FROM_SOURCE): Promise<ServerProcess> {
  const child = Bun.spawn(command.argv, {
    cwd: command.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let output = ''
  const decoder = new TextDecoder()
  const reader = child.stdout.getReader()
  let base: string | undefined
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      output += decoder.decode(value)
    }
  })()
  const deadline = Date.now() + 15_000
  while (!base) {
    // `started` is said at every LOG_LEVEL but silent; `listening` only at info and below.
    const match = /"event":"(?:listening|started)"[^\n]*?"url":"([^"]+)"/.exec(output)
    if (match) base = match[1]
    else if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL') // not left serving after the test failed
      throw new Error(`server process did not start: ${output}`)
    }
    else await Bun.sleep(10)
  }
  return {
    base,
    process: child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      child.kill(signal)
      const code = await child.exited
      await pump
      return code
    },
  }
}

/**
 * Runs the server (`bun src/main.ts` unless told otherwise) as a separate process that is expected to refuse to start, and returns
 * what it wrote and its exit status. One that starts serving instead is killed after
 * `deadlineMs`, so the test fails on its status rather than hanging.
 */
export async function runServerProcessToExit(env: Record<string, string>, deadlineMs = 15_000, command: ServerCommand = FROM_SOURCE) {
  const child = Bun.spawn(command.argv, {
    cwd: command.cwd,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const deadline = setTimeout(() => child.kill('SIGKILL'), deadlineMs)
  try {
    const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    return { stdout, stderr, status }
  } finally {
    clearTimeout(deadline)
  }
}
