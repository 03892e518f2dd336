import { randomBytes } from 'node:crypto'

/**
 * Makes sorted-set members unique across every process sharing one Redis: this process's random
 * tag and a counter. Each counted request (or running export) is one member, so that two in the
 * same millisecond are two entries and a give-back removes exactly its own.
 */
export function memberIds(): () => string {
  const tag = randomBytes(6).toString('base64url')
  let counter = 0
  return () => `${tag}${(++counter).toString(36)}`
}
