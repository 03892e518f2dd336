/**
 * Text a command prints for a person may hold what others chose: an organisation's or a token's
 * name, a tenant file's ids, a setting's value, an argument. A terminal runs the control
 * characters in it (`\x1b]0;…\x07` retitles the window, `\x1b[2J` clears the screen, C1's
 * `\x9b` is a CSI of its own), so they are printed as visible escapes: every C0 character but
 * newline and tab, DEL, and C1. JSON output escapes C0 already (JSON.stringify); C1 and DEL
 * are escaped there too, as `\u009b`, which a JSON reader reads back as the same character.
 */
const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g
const JSON_UNESCAPED_CONTROL = /[\x7f-\x9f]/g

const hex = (character: string) => character.charCodeAt(0).toString(16).padStart(2, '0')

/** `text` with every terminal control character shown as `\xNN`. */
export function escapeTerminal(text: string): string {
  return text.replace(TERMINAL_CONTROL, (character) => `\\x${hex(character)}`)
}

/** `value` as one line of JSON that holds no raw terminal control character. */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(JSON_UNESCAPED_CONTROL, (character) => `\\u00${hex(character)}`)
}
