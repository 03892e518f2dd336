import { expect } from 'bun:test'
import { expectError } from '../assertions.ts'
import type { Check, CheckGroup } from '../check.ts'

/**
 * Every rule of the ticket query that is answered 400, one check each, with the parameter the
 * answer must name. Fixed dates: a 400 needs no data.
 */
const DAY = 'from=2026-03-01&to=2026-03-02'
const CASES: { rule: string; path: string; param: string }[] = [
  { rule: 'from missing', path: '/v1/tickets?to=2026-03-02', param: 'from' },
  { rule: 'to missing', path: '/v1/tickets?from=2026-03-01', param: 'to' },
  { rule: 'a date-time without an offset', path: '/v1/tickets?from=2026-03-01T00:00:00&to=2026-03-02', param: 'from' },
  { rule: 'an impossible date', path: '/v1/tickets?from=2026-02-30&to=2026-03-02', param: 'from' },
  { rule: 'a leap second', path: '/v1/tickets?from=2026-03-01&to=2026-03-01T23:59:60Z', param: 'to' },
  { rule: 'to not later than from', path: '/v1/tickets?from=2026-03-02&to=2026-03-02', param: 'to' },
  { rule: 'a range longer than 90 days', path: '/v1/tickets?from=2026-01-01&to=2026-04-01T00:00:00.001Z', param: 'to' },
  { rule: 'limit 0', path: `/v1/tickets?${DAY}&limit=0`, param: 'limit' },
  { rule: 'limit above 500 (501)', path: `/v1/tickets?${DAY}&limit=501`, param: 'limit' },
  { rule: 'limit not a whole number', path: `/v1/tickets?${DAY}&limit=ten`, param: 'limit' },
  { rule: 'a status outside the six states', path: `/v1/tickets?${DAY}&status=LOST`, param: 'status' },
  { rule: 'an unknown parameter', path: `/v1/tickets?${DAY}&sort=desc`, param: 'sort' },
  { rule: 'an empty value', path: `/v1/tickets?${DAY}&queueId=`, param: 'queueId' },
  { rule: 'a non-repeatable parameter given twice', path: `/v1/tickets?${DAY}&to=2026-03-03`, param: 'to' },
  { rule: 'a cursor that is no nextCursor', path: `/v1/tickets?${DAY}&cursor=garbage`, param: 'cursor' },
  { rule: 'export: limit', path: `/v1/exports/tickets.csv?${DAY}&limit=10`, param: 'limit' },
  { rule: 'export: cursor', path: `/v1/exports/tickets.csv?${DAY}&cursor=abc`, param: 'cursor' },
  { rule: 'export: a range longer than 90 days', path: '/v1/exports/tickets.csv?from=2026-01-01&to=2026-04-02', param: 'to' },
]

function ruleCheck({ rule, path, param }: (typeof CASES)[number]): Check {
  return {
    name: `${rule} is 400 naming ${param}`,
    cost: { main: 1 },
    async run({ client }) {
      const body = expectError(await client.get(path), 'invalid_request', param)
      // The message names the parameter (from and to are named by the range rules in other words).
      if (param !== 'from' && param !== 'to') expect(body.message as string).toContain(param)
    },
  }
}

export const queryRuleChecks: CheckGroup = {
  title: 'query rules of /v1/tickets and /v1/exports/tickets.csv: every 400 names its parameter (JSON, before any CSV)',
  checks: CASES.map(ruleCheck),
}
