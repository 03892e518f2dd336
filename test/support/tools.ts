/**
 * Whether a command-line tool a test needs is installed: without it the test is skipped with a
 * warning naming the script that installs it; in CI (CI=true) it fails instead, since CI runs
 * that script (.ci/run).
 */
export function toolAvailable(command: string, installScript: string): boolean {
  if (Bun.which(command)) return true
  if (process.env.CI === 'true') throw new Error(`${command} is not installed: CI installs it with ${installScript}`)
  console.warn(`warning: ${command} is not installed here; its tests are skipped (${installScript} installs it)`)
  return false
}
