/** Progress goes to stderr; stdout carries only the final Markdown table. */
export const log = (line: string) => process.stderr.write(line + '\n')
