import { type DatabaseFamily, type DbEngine, type DbServer, DEFAULT_DB_SERVER } from '@siteplane/contract';

/**
 * DB_ENGINE_SOURCE: where database engines come from when a site needs a family the server lacks.
 * `vendor` (default): the spec's rule 5, the vendors' apt repositories where the distribution lacks
 * a version. `distribution`: only what the server's own distribution ships (servers that reach
 * only their distribution's mirror).
 */
export const DB_ENGINE_SOURCES = ['vendor', 'distribution'] as const;
export type DbEngineSource = (typeof DB_ENGINE_SOURCES)[number];

/**
 * Which database engines a server can be given, asked by the create rules (spec §4.1 rule 5) when
 * the family is not installed yet. The operator's DB_ENGINE_SOURCE decides; provisioning's engine
 * table answers (steps/database/engine-offer.ts), so this module knows no package or repository.
 */
export interface EngineOffer {
  /** The engine installed when a site needs `family` and the server has none, or why there is none. */
  defaultEngine(family: DatabaseFamily, os: string | null): { engine: DbEngine } | { refused: string };
  /** Why `engine` cannot be installed on a server whose facts say `os`; null when it can. */
  refusal(engine: DbServer, os: string | null): string | null;
}

/**
 * Rule 5 as the spec writes it: mysql80 and postgresql13 by default, any §2.4 value on request
 * (vendors' repositories where the distribution lacks the version). Used when nothing else is wired.
 */
export const SPEC_ENGINE_OFFER: EngineOffer = {
  defaultEngine: (family) => ({ engine: DEFAULT_DB_SERVER[family] }),
  refusal: () => null,
};
