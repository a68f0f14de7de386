import type { DatabaseFamily, DbServer } from '@siteplane/contract';
import { dbServerFamily } from '@siteplane/contract';

/**
 * What a server has installed (ARCHITECTURE §2): declared for dry-run servers, detected by verify
 * for ssh/local ones. Database engines use the spec's preferredDbServer vocabulary.
 */
export interface ServerFacts {
  os: string | null;
  arch?: string | null;
  php: string[];
  node: string | null;
  mysql: DbServer | null;
  postgresql: DbServer | null;
  nginx?: string | null;
  pm2?: string | null;
}

export const EMPTY_FACTS: ServerFacts = { os: null, php: [], node: null, mysql: null, postgresql: null };

export function installedEngine(facts: ServerFacts, family: DatabaseFamily): DbServer | null {
  return family === 'mysql' ? facts.mysql : facts.postgresql;
}

export function withEngine(facts: ServerFacts, engine: DbServer): ServerFacts {
  return dbServerFamily(engine) === 'mysql' ? { ...facts, mysql: engine } : { ...facts, postgresql: engine };
}

export function nodeMajor(version: string | null): number | null {
  if (!version) return null;
  const match = /^v?(\d+)/.exec(version);
  return match ? Number(match[1]) : null;
}
