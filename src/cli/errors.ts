/**
 * How the admin CLI reports a failure: `usage` (wrong input, exit 2), `configuration` (the
 * environment, exit 2), `unexpected` (exit 1). Without --json one line for a person; with --json
 * exactly one JSON document, so that a script reading stderr can parse it as it parses stdout.
 */
export type AdminErrorKind = 'usage' | 'configuration' | 'unexpected'

export function errorText(kind: AdminErrorKind, message: string, json: boolean): string {
  const oneLine = message.replace(/\s*\n\s*/g, ' ')
  return json ? JSON.stringify({ error: kind, message: oneLine }) + '\n' : `admin: ${oneLine}\n`
}
