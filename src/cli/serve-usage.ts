/** The server's `--help`, naming how it was invoked (`queue-api`, `npm start --`). */
export const serveUsage = (program: string) => `usage: ${program}
  Serves the API; every setting is an environment variable (the README's Configuration table),
  e.g. PORT=8080 DATA_DIR=/srv/queue-api ${program.replace(/ --$/, '')}. It takes no arguments.
  Signals: SIGTERM/SIGINT drain and stop, SIGHUP replaces the workers one by one.
  Exit status: 0 stopped after a drain; 2 a setting or the host refused the start (one line on stderr).`

/** The flags the supervisor starts a worker with (src/server/workers.ts); no other argument is taken. */
const isWorkerFlag = (arg: string) => arg.startsWith('--worker=') || arg.startsWith('--supervisor=')

/** What is wrong with the server's arguments, or undefined when they are none but a worker's. */
export function serveArgumentsProblem(args: readonly string[]): string | undefined {
  const extra = args.find((arg) => !isWorkerFlag(arg))
  return extra === undefined ? undefined : `the server takes no arguments (got "${extra}"); it is configured by environment variables`
}
