import { describe, expect, test } from 'bun:test'
import { SignedValueCodec, type SignedValueKind } from '../../src/crypto/signed-value.ts'

const codec = new SignedValueCodec('test-signing-key')
const kind = (tag: string, maxLength = 512): SignedValueKind => ({ maxLength, signedText: (payload) => JSON.stringify([tag, payload]) })

describe('SignedValueCodec', () => {
  test('round trip; base64url payload and signature', () => {
    const value = codec.encode(kind('a'), ['x', 1])
    expect(value).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
    expect(codec.decode(kind('a'), value)).toEqual({ ok: true, fields: ['x', 1] })
  })

  test('the length cap comes before anything else: a genuine value over it is refused as malformed', () => {
    const value = codec.encode(kind('a'), ['x'.repeat(100)])
    expect(codec.decode(kind('a', value.length), value).ok).toBe(true)
    expect(codec.decode(kind('a', value.length - 1), value)).toEqual({ ok: false, problem: 'malformed' })
  })

  test('malformed shapes, altered values, another kind or key', () => {
    for (const garbage of ['', '.', 'abc', 'a.b.c', '.abc', 'abc.', 'a b.c', '%%%.x']) {
      expect(codec.decode(kind('a'), garbage)).toEqual({ ok: false, problem: 'malformed' })
    }
    const value = codec.encode(kind('a'), ['x'])
    expect(codec.decode(kind('b'), value)).toEqual({ ok: false, problem: 'altered' })
    expect(new SignedValueCodec('another-key').decode(kind('a'), value)).toEqual({ ok: false, problem: 'altered' })
    const [, signature] = value.split('.') as [string, string]
    const forged = Buffer.from(JSON.stringify(['y'])).toString('base64url')
    expect(codec.decode(kind('a'), `${forged}.${signature}`)).toEqual({ ok: false, problem: 'altered' })
  })

  test('a signed payload that is not JSON is malformed', () => {
    const payload = Buffer.from('not json').toString('base64url')
    // A kind whose signed text ignores the payload, so that any payload carries a valid signature.
    const constant: SignedValueKind = { maxLength: 512, signedText: () => 'constant' }
    const [, signature] = codec.encode(constant, 0).split('.') as [string, string]
    expect(codec.decode(constant, `${payload}.${signature}`)).toEqual({ ok: false, problem: 'malformed' })
  })
})
