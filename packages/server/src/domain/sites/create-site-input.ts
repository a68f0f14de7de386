import type { DbEngine, SiteTypeId } from '@siteplane/contract';

/** A create request that passed every rule: what the site should be, nothing yet generated. */
export interface SitePlan {
  server: string;
  serverUser: string;
  type: SiteTypeId;
  freeDomain: boolean;
  /** null for a temporary domain until one is generated. */
  domain: string | null;
  ssl: SslPlan;
  supportsLivewire: boolean;
  /** Type options, normalised, without secrets (no databasePassword, no wpAdminSetup.adminPassword). */
  options: Record<string, unknown>;
  /** Secrets from the request, kept apart so they are encrypted and never echoed. */
  secrets: { databasePassword?: string; wpAdminPassword?: string };
  database: DatabasePlan | null;
  runtime: RuntimePlan;
}

export interface SslPlan {
  enabled: boolean;
  provider: 'letsencrypt' | 'zerossl' | null;
  email: string | null;
  wildcard: boolean;
  includeWww: boolean;
  dnsProfile: { uuid: string; provider: string } | null;
}

export interface DatabasePlan {
  /** false for phpMyAdmin, which gets a user only. */
  createDatabase: boolean;
  name: string | null;
  user: string | null;
  /** A preferredDbServer value, the installed engine, or the default of DB_ENGINE_SOURCE. */
  engine: DbEngine;
  /** true when the family is not on the server and the engine must be installed. */
  installEngine: boolean;
  useCachingSha2Password: boolean;
}

export interface RuntimePlan {
  php?: { version: string; install: boolean };
  node?: { version: string; action: 'reuse' | 'install' | 'upgrade' };
}
