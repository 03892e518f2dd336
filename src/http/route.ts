import type { Handler } from './context.ts'

/** A GET route of the pipeline: a path and its handler (src/http/pipeline.ts). */
export interface Route {
  path: string
  handler: Handler
}
