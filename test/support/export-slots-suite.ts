import { afterEach, describe, expect, test } from 'bun:test'
import { ApiError } from '../../src/errors/api-error.ts'
import type { ExportSlotLimits, ExportSlots } from '../../src/limits/export-slots.ts'

/**
 * The behaviour every engine of the ExportSlots seam (src/limits/export-slots.ts) must show:
 * each engine's test file calls this with a harness that builds it.
 */
export interface ExportSlotsHarness {
  create(limits: ExportSlotLimits): Promise<ExportSlots>
  /** Releases what `create` opened. */
  cleanUp?(): Promise<void>
}

/** The ApiError a claim was refused with (fails the test when it was not refused). */
export async function refusal(claim: Promise<unknown>): Promise<ApiError> {
  try {
    await claim
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('the claim was not refused')
}

/**
 * Gives-back are not awaited (an export's end does not wait for them); a claim that needs the
 * slot back retries until the give-back has landed, within a bound.
 */
export async function claimSoon(slots: ExportSlots, tokenId: string, timeoutMs = 5000): Promise<() => void> {
  const giveUpAt = Date.now() + timeoutMs
  for (;;) {
    try {
      return await slots.claim(tokenId)
    } catch (error) {
      if (!(error instanceof ApiError) || Date.now() > giveUpAt) throw error
      await Bun.sleep(5)
    }
  }
}

export function exportSlotsSuite(name: string, harness: ExportSlotsHarness) {
  describe(`${name}: the ExportSlots seam`, () => {
    afterEach(async () => {
      await harness.cleanUp?.()
    })

    test('one token runs at most perToken exports: the next claim is 429 too_many_exports with Retry-After', async () => {
      const slots = await harness.create({ perToken: 2, max: 10 })
      await slots.claim('a')
      await slots.claim('a')
      const refused = await refusal(slots.claim('a'))
      expect(refused.errorCode).toBe('too_many_exports')
      expect(refused.headers).toEqual({ 'Retry-After': '5' })
      expect(refused.extra).toEqual({ retryAfter: 5 })
      expect(refused.message).toContain('This token already runs 2 exports')
      // Another token is not held back by this one.
      await slots.claim('b')
    })

    test('at most max exports in all, whatever the token', async () => {
      const slots = await harness.create({ perToken: 2, max: 3 })
      await slots.claim('a')
      await slots.claim('b')
      await slots.claim('c')
      const refused = await refusal(slots.claim('d'))
      expect(refused.errorCode).toBe('too_many_exports')
      expect(refused.message).toContain('The server already runs 3 exports')
    })

    test('a slot given back can be claimed again; giving it back twice frees only one', async () => {
      const slots = await harness.create({ perToken: 2, max: 10 })
      const giveBack = await slots.claim('a')
      await slots.claim('a')
      giveBack()
      giveBack()
      await claimSoon(slots, 'a')
      // Had the second give-back freed another slot, this one would be taken.
      await refusal(slots.claim('a'))
    })

    test('a refused claim takes nothing: per token and in all', async () => {
      const slots = await harness.create({ perToken: 1, max: 3 })
      const first = await slots.claim('a')
      for (let i = 0; i < 5; i++) await refusal(slots.claim('a'))
      first()
      // Had a refused claim of 'a' been kept, 'a' could not run one export now.
      await claimSoon(slots, 'a')
      await slots.claim('b')
      const third = await slots.claim('c')
      for (let i = 0; i < 5; i++) expect((await refusal(slots.claim('d'))).message).toContain('The server already runs 3')
      third()
      // Had a refused claim of 'd' been kept in all, the server would still be full.
      await claimSoon(slots, 'd')
    })
  })
}
