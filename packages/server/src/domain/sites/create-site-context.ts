import type { SiteTypeId } from '@siteplane/contract';
import type { ServerFacts } from '../servers/facts.js';
import type { EngineOffer } from './engine-offer.js';
import type { PhpSource } from './php-offer.js';

/** What the rules need to know about the world; the use case loads it, the rules stay pure. */
export interface CreateSiteContext {
  /** null when the server does not exist for this tenant. */
  server: { uuid: string; facts: ServerFacts } | null;
  serverUserExists: boolean;
  /** null when the named DNS profile does not exist for this tenant; undefined when none was named. */
  dnsProfile?: { uuid: string; provider: string } | null;
  /** Where engines come from (DB_ENGINE_SOURCE); absent: the spec's rule 5 defaults (SPEC_ENGINE_OFFER). */
  engines?: EngineOffer;
  /** Where PHP versions come from (PHP_SOURCE); absent: `sury`. */
  phpSource?: PhpSource;
  taken: {
    domains: ReadonlySet<string>;
    databases: ReadonlySet<string>;
    databaseUsers: ReadonlySet<string>;
    ports: ReadonlySet<number>;
    singletonTypes: ReadonlySet<SiteTypeId>;
  };
}
