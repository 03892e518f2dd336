/** The public contract in code: plain values, and the TypeBox schemas with their types. */
export * from './vocabulary.ts'
export * from './schemas.ts'
