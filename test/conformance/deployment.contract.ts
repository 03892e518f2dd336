/**
 * The contract suite against a running deployment: `npm run -s contract` (test/conformance/run.ts)
 * runs this file with `bun test`. Its name does not end in .test.ts, so that `npm test` does not
 * pick it up without a URL; the self-check (self-check.test.ts) runs it against the project's
 * own server.
 */
import { optionsFromEnv, satisfied } from './options.ts'
import { createContext, registerContractSuite } from './suite.ts'

const options = optionsFromEnv(process.env)
if ('error' in options) throw new Error(options.error)

const context = createContext(options, { now: () => Date.now(), sleep: (ms) => Bun.sleep(ms) }, (line) => console.error(line))
registerContractSuite(() => context, satisfied(options))
