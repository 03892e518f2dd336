/** Who is calling: decided by the token alone, never by the path or the query. */
export interface Caller {
  tokenId: string
  organisationId: string
  demo: boolean
}
