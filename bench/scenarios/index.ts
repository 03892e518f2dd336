import type { Scenario } from '../scenario.ts'
import { csv } from './csv.ts'
import { formatter } from './formatter.ts'
import { memory } from './memory.ts'
import { slowReader } from './slow-reader.ts'
import { pages } from './pages.ts'
import { fairness } from './fairness.ts'
import { yieldMechanism } from './yield.ts'
import { tenants } from './tenants.ts'
import { limiter } from './limiter.ts'
import { processEffect } from './process.ts'
import { sync } from './sync.ts'
import { redis } from './redis.ts'
import { changes } from './changes.ts'
import { rowCheck } from './row-check.ts'
import { metrics } from './metrics.ts'

/** Every scenario, in the order a run takes them (whatever order --only names them in). */
export const SCENARIOS: readonly Scenario[] = [csv, formatter, memory, slowReader, pages, fairness, yieldMechanism, tenants, limiter, redis, sync, changes, rowCheck, metrics, processEffect]
