import { DuckDBInstance } from '@duckdb/node-api'

/** Rows of a DuckDB file as JSON values, over an instance opened and closed for the query (as a reader should). */
export async function queryDuckDb(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file)
  const connection = await instance.connect()
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}
