import { expect } from 'bun:test'
import { generateToken } from '../../../src/auth/token.ts'
import { expectError, expectStatus } from '../assertions.ts'
import type { Check, CheckGroup } from '../check.ts'
import type { Exchange } from '../client.ts'
import { OPERATIONS } from './frame.ts'

/** Each operation with a query it accepts (a day without data is fine: only the status matters). */
const PATHS = [OPERATIONS[0], `${OPERATIONS[1]}?from=2026-03-01&to=2026-03-02`, `${OPERATIONS[2]}?from=2026-03-01&to=2026-03-02`]

/** 401 unauthorized with the Bearer challenge (naming invalid_token when a token was given), counting nowhere. */
function expectUnauthorized(exchange: Exchange, tokenGiven: boolean): void {
  expectError(exchange, 'unauthorized')
  const challenge = exchange.headers.get('www-authenticate') ?? ''
  expect(challenge).toStartWith('Bearer')
  expect({ path: exchange.path, invalidToken: challenge.includes('error="invalid_token"') }).toEqual({ path: exchange.path, invalidToken: tokenGiven })
  // 401 counts nowhere, so it shows no rate-limit state.
  expect(exchange.headers.get('x-ratelimit-remaining')).toBeNull()
}

/** A check that sends one Authorization header (or none) to each operation and expects 401. */
function refused(name: string, authorization: (token: string) => string | undefined, tokenGiven: boolean): Check {
  return {
    name,
    cost: { none: PATHS.length },
    async run({ client, options }) {
      for (const path of PATHS) expectUnauthorized(await client.request(path, { authorization: authorization(options.tokens.main) }), tokenGiven)
    },
  }
}

/** The last character of a token changed, so that its checksum (or, elsewhere, its hash) fails. */
const lastCharacterChanged = (token: string) => token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')

export const securityChecks: CheckGroup = {
  title: 'authentication of every operation',
  checks: [
    refused('no Authorization header: 401', () => undefined, false),
    refused('another scheme (Basic): 401', () => `Basic ${btoa('user:pass')}`, false),
    refused('a malformed token (wrong prefix): 401', (token) => `Bearer ${token.replace(/^svc_/, 'sk_x')}`, true),
    refused('a token whose checksum fails: 401', (token) => `Bearer ${lastCharacterChanged(token)}`, true),
    refused('a well-formed token nobody issued: 401', () => `Bearer ${generateToken()}`, true),
    {
      name: 'a revoked token: 401',
      cost: { revoked: PATHS.length },
      needs: ['API_REVOKED_TOKEN'],
      async run({ client }) {
        for (const path of PATHS) expectUnauthorized(await client.get(path, 'revoked'), true)
      },
    },
    {
      name: 'the scheme is case-insensitive',
      cost: { main: PATHS.length },
      async run({ client, options }) {
        for (const path of PATHS) expectStatus(await client.request(path, { as: 'main', authorization: `bEaReR ${options.tokens.main}` }), 200)
      },
    },
    {
      name: 'an organisation without the API feature: 402 api_not_enabled, its window shown and nothing counted',
      cost: { disabled: PATHS.length },
      needs: ['API_DISABLED_TOKEN'],
      async run({ client }) {
        for (const path of PATHS) {
          const exchange = await client.get(path, 'disabled')
          expectError(exchange, 'api_not_enabled')
          // Its requests never count, so every answer shows the whole window left.
          expect(exchange.headers.get('x-ratelimit-remaining')).toBe(exchange.headers.get('x-ratelimit-limit'))
        }
      },
    },
  ],
}
