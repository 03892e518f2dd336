import { describe, expect, test } from 'bun:test'
import { inRounds } from '../../bench/measure.ts'

describe('inRounds: the sides of a diagnostic measured in turn (bench/scenarios/layers.ts, process.ts)', () => {
  test('each round starts one side later; round 0 is a warm-up and is not kept', async () => {
    const order: string[] = []
    let run = 0
    const runs = await inRounds(['a', 'b', 'c'], 2, async (side) => {
      order.push(side)
      return `${side}${run++}`
    })
    expect(order).toEqual(['a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b'])
    // Kept in the order of the sides, whichever went first: runs 3-8 (0-2 warmed up).
    expect(runs).toEqual([
      ['a5', 'a7'],
      ['b3', 'b8'],
      ['c4', 'c6'],
    ])
  })
})
