import type { Migration } from 'kysely';
import * as m001 from './001_initial.js';
import * as m002 from './002_tls.js';
import * as m003 from './003_vc_profile_names.js';
import * as m004 from './004_idempotency_scope.js';
import * as m005 from './005_sites_by_team.js';
import * as m006 from './006_free_domain_issuance.js';
import * as m007 from './007_fair_claim.js';
import * as m008 from './008_webhooks.js';
import * as m009 from './009_deployments.js';
import * as m010 from './010_provider_deploy_keys.js';
import * as m011 from './011_artifact_deployments.js';
import * as m012 from './012_site_list_versions.js';
import * as m013 from './013_events.js';
import * as m014 from './014_outgoing_webhooks.js';
import * as m015 from './015_outgoing_webhook_controls.js';
import * as m016 from './016_webhook_provider_hooks.js';
import * as m017 from './017_backfill_hook_profiles.js';
import * as m018 from './018_jobs_running.js';
import * as m019 from './019_rate_limit_counts.js';

/** Numbered, forward-only; the same list for SQLite and PostgreSQL. */
export const migrations: Record<string, Migration> = {
  '001_initial': m001,
  '002_tls': m002,
  '003_vc_profile_names': m003,
  '004_idempotency_scope': m004,
  '005_sites_by_team': m005,
  '006_free_domain_issuance': m006,
  '007_fair_claim': m007,
  '008_webhooks': m008,
  '009_deployments': m009,
  '010_provider_deploy_keys': m010,
  '011_artifact_deployments': m011,
  '012_site_list_versions': m012,
  '013_events': m013,
  '014_outgoing_webhooks': m014,
  '015_outgoing_webhook_controls': m015,
  '016_webhook_provider_hooks': m016,
  '017_backfill_hook_profiles': m017,
  '018_jobs_running': m018,
  '019_rate_limit_counts': m019,
};

/** The table Kysely's migrator keeps its applied migrations in (its default name; one row per migration). */
export const MIGRATION_TABLE = 'kysely_migration';

/**
 * Of the migrations a database records, those this version has not got: a newer Siteplane ran them,
 * and migrations only go forward, so this version must not use that database.
 */
export function newerMigrations(recorded: string[]): string[] {
  return recorded.filter((name) => !Object.hasOwn(migrations, name)).sort();
}
