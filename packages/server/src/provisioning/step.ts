import type { DbServer, SiteTypeId } from '@siteplane/contract';
import type { ServerFacts } from '../domain/servers/facts.js';
import type { Executor } from './executor.js';

/**
 * A recipe (one per site type) lists steps; a step is an idempotent "ensure" that checks before it
 * changes, so a retried or resumed job finishes the work without duplicates (ARCHITECTURE §3).
 */
export interface Step {
  /** Stable, human-readable (`ensure nginx vhost`); shown in the operation's step list. */
  name: string;
  run(ctx: StepContext): Promise<void>;
}

/** A resource a site created on its server; deletion walks these (the site's ledger). */
export interface LedgerEntry {
  kind:
    | 'system_user'
    | 'directory'
    | 'php_fpm_pool'
    | 'nginx_vhost'
    | 'pm2_process'
    /** A user's PM2 daemon (ref: the user), shared by their Node sites and stopped with the last. */
    | 'pm2_daemon'
    /** The systemd unit `pm2 startup` installed for a user (ref: its path), shared like the daemon. */
    | 'pm2_startup'
    | 'database'
    | 'database_user'
    | 'certificate'
    | 'dns_record'
    | 'file';
  /** What identifies it on the server: a path, a process name, a database name. */
  ref: string;
  details?: Record<string, unknown>;
}

export interface Ledger {
  record(entry: LedgerEntry): Promise<void>;
  forget(entry: Pick<LedgerEntry, 'kind' | 'ref'>): Promise<void>;
  list(): Promise<LedgerEntry[]>;
}

/** What provisioning knows of the site: the stored record with its secrets decrypted. */
export interface ProvisionedSite {
  uuid: string;
  type: SiteTypeId;
  domain: string;
  /** The system user that owns the site (the server user's username). */
  user: string;
  options: Record<string, unknown>;
  ssl: { enabled: boolean; provider: string | null; wildcard: boolean; includeWww: boolean };
  database: {
    createDatabase: boolean;
    name: string | null;
    user: string;
    password: string;
    engine: DbServer;
    installEngine: boolean;
    useCachingSha2Password: boolean;
  } | null;
  runtime: {
    php?: { version: string; install: boolean };
    node?: { version: string; action: 'reuse' | 'install' | 'upgrade' };
  };
  /** Port the site's process listens on (Node types, Soketi, Generic Port). */
  port: number | null;
  secrets: { wpAdminPassword?: string };
}

export interface ProvisioningSettings {
  wordpressSource: string;
  phpmyadminSource: string;
  npmRegistry: string | null;
  /** Where Node comes from when a server needs one (NODE_SOURCE; steps/ensure-node.ts). */
  nodeSource: 'nodesource' | 'npm';
  /**
   * How long one long command (a package install, a framework's npm install, a deploy's build or
   * hook) may run before it is stopped and its step fails (SITEPLANE_LONG_COMMAND_MINUTES); absent:
   * steps/commands.ts LONG_TIMEOUT_MS.
   */
  longCommandTimeoutMs?: number;
}

/**
 * Which step of which operation runs. Long commands take their detached run's id from it, so the
 * next attempt of the same operation (after a crash) finds them (steps/commands.ts). A new object
 * for every run of a step.
 */
export interface StepRun {
  /** The operation's id: the same for every attempt of its job, new for a retry. */
  operation: string;
  /** The step's place and name in the operation (`3 ensure nginx`). */
  step: string;
}

export interface StepContext {
  exec: Executor;
  /** Absent outside a job (tests, tools): long commands then get random run ids. */
  current?: StepRun;
  site: ProvisionedSite;
  facts: ServerFacts;
  ledger: Ledger;
  settings: ProvisioningSettings;
  /** A line for the operation log; secrets are redacted before it is stored. */
  log(line: string): void;
  /** Runs fn holding a per-server lock (package installs: apt/dpkg must not run twice). */
  withServerLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Updates the server's recorded facts after a step installed something. */
  updateFacts(patch: Partial<ServerFacts>): Promise<void>;
  /** True when another live site of the server lists this resource (a user's shared PHP-FPM pool). */
  sharedResourceInUse?(entry: Pick<LedgerEntry, 'kind' | 'ref'>): Promise<boolean>;
}

export interface Recipe {
  type: SiteTypeId;
  /** Steps that bring the site into being. */
  create(site: ProvisionedSite): Step[];
  /** Steps that remove what the ledger lists; the database only when deleteDatabase is true. */
  remove(site: ProvisionedSite, options: { deleteDatabase: boolean }): Step[];
}
