import type { Kysely } from 'kysely';
import type { Clock } from '../app/clock.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { EngineOffer } from '../domain/sites/engine-offer.js';
import type { PhpSource } from '../domain/sites/php-offer.js';
import type { EgressPolicy } from '../egress/egress-policy.js';
import type { ArtifactStore } from '../storage/artifact-store.js';
import type { ChangeNotifier } from '../storage/change-notifier.js';
import type { Dialect } from '../storage/database.js';
import type { WriteTransactions } from '../storage/group-commit.js';
import type { Database } from '../storage/schema.js';
import type { IssuanceBudget } from '../tls/issuance-limits.js';
import type { Integrations } from './integrations.js';
import type { Quotas } from './quotas.js';
import type { SiteListCache } from './sites/site-list-cache.js';

/** What use cases receive: only ports, built once in app/. */
export interface UseCaseDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  secrets: SecretBox;
  clock: Clock;
  freeDomainBase: string;
  /** FREE_DOMAIN_DNS_PROFILE: the DNS profile holding the temporary-domain zone, when one is configured. */
  freeDomainDnsProfile: string | null;
  /** Wakes the in-process worker after a job is committed. */
  jobEnqueued(): void;
  integrations: Integrations;
  /** Told of every change to a server's sites (list cache invalidation). */
  siteLists: SiteListCache;
  /** Which database engines a create may plan (DB_ENGINE_SOURCE, spec §4.1 rule 5). */
  databaseEngines: EngineOffer;
  /** Where PHP versions a server lacks may come from (PHP_SOURCE, spec §2.2). */
  phpSource: PhpSource;
  /** The transaction of a site create or delete (shared with concurrent ones on SQLite: group commit). */
  writes: WriteTransactions;
  /** Where tenant-chosen targets may be (SITEPLANE_ALLOWED_TARGETS). */
  egress: EgressPolicy;
  /** SITEPLANE_LOCAL_SERVER: whether `connection: "local"` servers may be registered. */
  localServer: boolean;
  /** SITEPLANE_QUOTA_*: records a team may hold, checked in the create's transaction. */
  quotas: Quotas;
  /** Notifications that a record changed (the event streams follow them; across processes on PostgreSQL). */
  changes: ChangeNotifier;
  /** FREE_DOMAIN_*CERTIFICATES_PER_WEEK: checked by POST /api/v1/sites/<uuid>/ssl for temporary names in the zone. */
  freeZoneBudget: IssuanceBudget;
  /** SITEPLANE_PUBLIC_URL: where hook and trigger URLs point (null: the request's scheme and host). */
  publicUrl: string | null;
  /** Uploaded deploy artifacts (POST …/deployments with a .tar.gz), files of the data directory. */
  artifacts: ArtifactStore;
  /** How often a change-log stream reads again without a notification (default 2 s; tests lengthen it to prove notifications). */
  streamPollMs?: number;
}
