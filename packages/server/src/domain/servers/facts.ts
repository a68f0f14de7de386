import type { DatabaseFamily, DbEngine } from '@siteplane/contract';
import { dbEngineFamily } from '@siteplane/contract';

/**
 * What a server has installed (ARCHITECTURE §2): declared for dry-run servers, detected by verify
 * for ssh/local ones. Database engines are named in the spec's preferredDbServer vocabulary, and
 * versions it lacks by the same pattern (DbEngine: `mariadb118`), never by a neighbour's name.
 */
export interface ServerFacts {
  os: string | null;
  arch?: string | null;
  php: string[];
  node: string | null;
  mysql: DbEngine | null;
  postgresql: DbEngine | null;
  nginx?: string | null;
  pm2?: string | null;
}

export const EMPTY_FACTS: ServerFacts = { os: null, php: [], node: null, mysql: null, postgresql: null };

export function installedEngine(facts: ServerFacts, family: DatabaseFamily): DbEngine | null {
  return family === 'mysql' ? facts.mysql : facts.postgresql;
}

export function withEngine(facts: ServerFacts, engine: DbEngine): ServerFacts {
  return dbEngineFamily(engine) === 'mysql' ? { ...facts, mysql: engine } : { ...facts, postgresql: engine };
}

export function nodeMajor(version: string | null): number | null {
  if (!version) return null;
  const match = /^v?(\d+)/.exec(version);
  return match ? Number(match[1]) : null;
}
