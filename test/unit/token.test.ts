import { describe, expect, test } from 'bun:test'
import { generateToken, hashToken, isWellFormedToken, TOKEN_LENGTH } from '../../src/auth/token.ts'

describe('API tokens', () => {
  test('format: svc_ + 32 random + 6 checksum characters, all base62', () => {
    const token = generateToken()
    expect(token).toMatch(/^svc_[A-Za-z0-9]{38}$/)
    expect(token).toHaveLength(TOKEN_LENGTH)
    expect(isWellFormedToken(token)).toBe(true)
  })

  test('tokens do not repeat and use the whole alphabet', () => {
    const tokens = new Set(Array.from({ length: 2000 }, generateToken))
    expect(tokens.size).toBe(2000)
    const chars = new Set([...tokens].flatMap((t) => [...t.slice(4, 36)]))
    expect(chars.size).toBe(62)
  })

  test('any single-character change fails the checksum', () => {
    const token = generateToken()
    for (let i = 4; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1)
      expect(isWellFormedToken(changed)).toBe(false)
    }
  })

  test('malformed shapes are refused', () => {
    const token = generateToken()
    for (const bad of ['', 'svc_', token.slice(0, -1), token + 'A', token.replace('svc_', 'SVC_'), token.slice(0, 10) + '-' + token.slice(11), ` ${token}`]) {
      expect(isWellFormedToken(bad)).toBe(false)
    }
  })

  test('stored form is the SHA-256 of the whole token', () => {
    expect(hashToken('svc_example')).toBe(new Bun.CryptoHasher('sha256').update('svc_example').digest('hex'))
    expect(hashToken(generateToken())).toMatch(/^[0-9a-f]{64}$/)
  })
})
