import type { DatabaseFamily, DbServer } from '@siteplane/contract';
import { type DbEngineSource, type EngineOffer, SPEC_ENGINE_OFFER } from '../../../domain/sites/engine-offer.js';
import { distributionEngine, type EngineSource, engineSource, shippedBy } from './engines.js';

const FAMILY_NAME: Record<DatabaseFamily, string> = { mysql: 'MySQL/MariaDB', postgresql: 'PostgreSQL' };

/**
 * The create rules' EngineOffer for DB_ENGINE_SOURCE, read from the engine table. `vendor` is the
 * spec's rule 5 (vendors' repositories where the distribution lacks the version). `distribution`
 * is for servers that reach only their distribution's mirror: the default is the engine the
 * server's OS ships, and a version only a vendor publishes is refused before anything is queued.
 */
export function engineOffer(source: DbEngineSource): EngineOffer {
  return source === 'vendor' ? SPEC_ENGINE_OFFER : DISTRIBUTION_OFFER;
}

const DISTRIBUTION_OFFER: EngineOffer = {
  defaultEngine(family, os) {
    const shipped = os ? distributionEngine(family, os) : null;
    if (shipped) return { engine: shipped.engine };
    const what = FAMILY_NAME[family];
    return {
      refused: os
        ? `Siteplane knows no ${what} engine in ${os}'s own package archive, and DB_ENGINE_SOURCE=distribution installs no other; install ${what} on the server and it is reused.`
        : `The server's operating system is not known (verify the server), so the distribution's ${what} cannot be chosen (DB_ENGINE_SOURCE=distribution).`,
    };
  },
  refusal(engine: DbServer, os) {
    const source = engineSource(engine);
    if (os && shippedBy(source, os)) return null;
    const shipped = os ? distributionEngine(source.family, os) : null;
    const instead = shipped ? `; omit preferredDbServer to get ${os}'s ${shipped.engine}` : '';
    return `${engine} ${origin(source, os)}, and DB_ENGINE_SOURCE=distribution installs database engines from the server's distribution only${instead}.`;
  },
};

function origin(source: EngineSource, os: string | null): string {
  const where = os ? `is not in ${os}'s own package archive` : 'cannot be matched to the server (its OS is not known)';
  if (source.unavailable || !source.repository) return `${where} and has no other package source`;
  return `${where}: it comes only from ${new URL(source.repository('').uri).host}`;
}
