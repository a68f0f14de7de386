/** Who is calling: resolved from the bearer token (ARCHITECTURE §2 "Tenancy and tokens"). */
export interface Actor {
  tokenUuid: string;
  accountUuid: string;
  /** The teams the token reaches: one for a team token, every team of the account for a global one. */
  teamUuids: string[];
  scope: 'read' | 'write';
}
