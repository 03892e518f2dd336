import { randomBase62 } from './auth/token.ts'

/** Identifiers of records this service creates: a type prefix and 16 random base62 characters. */
export function newId(prefix: 'org' | 'tok'): string {
  return `${prefix}_${randomBase62(16)}`
}
