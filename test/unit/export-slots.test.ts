import { expect, test } from 'bun:test'
import { MemoryExportSlots } from '../../src/limits/export-slots.ts'
import { exportSlotsSuite } from '../support/export-slots-suite.ts'

/** The in-memory engine of the running exports (the default without REDIS_URL). */
exportSlotsSuite('MemoryExportSlots', { create: async (limits) => new MemoryExportSlots(limits) })

test('MemoryExportSlots counts per token and in all, and forgets a token with nothing running', async () => {
  const slots = new MemoryExportSlots({ perToken: 2, max: 5 })
  const first = await slots.claim('a')
  await slots.claim('a')
  await slots.claim('b')
  expect([slots.running(), slots.running('a'), slots.running('b')]).toEqual([3, 2, 1])
  first()
  expect([slots.running(), slots.running('a')]).toEqual([2, 1])
})
