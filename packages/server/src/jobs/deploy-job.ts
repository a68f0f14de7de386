import type { SiteTypeId } from '@siteplane/contract';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.js';
import { deployabilityOf, isMigrationHook } from '../domain/deployments/type-defaults.js';
import type { DeployPlan, DeployProgress, DeploySource, DeploySteps } from '../provisioning/deploy/plan.js';
import type { ProvisionedSite, Step } from '../provisioning/step.js';
import type { ArtifactStore } from '../storage/artifact-store.js';
import type { Database } from '../storage/schema.js';
import { loadDeploySettings } from '../use-cases/deployments/deploy-settings.js';
import { openEnvironment } from '../use-cases/deployments/environment.js';
import { parseGitRemote } from '../vcs/git-remote.js';

export const isDeployKind = (kind: string): kind is 'deploy' | 'rollback' => kind === 'deploy' || kind === 'rollback';

/** Thrown between steps once the user cancelled the deployment; the operation ends `cancelled`. */
export class DeployCancelled extends Error {
  override name = 'DeployCancelled';
  /** The run's step names and the first that did not finish (set by the runner), to mark them aborted. */
  steps: { names: string[]; from: number } = { names: [], from: 0 };
  constructor() {
    super('the deployment was cancelled; the live release keeps serving');
  }
}

export interface DeployJobDeps {
  db: Kysely<Database>;
  secrets: SecretBox;
  deploySteps?: DeploySteps;
  /** Where uploaded artifacts wait for their deploy (absent: artifact deployments fail, saying so). */
  artifacts?: ArtifactStore;
  /** How often a running deployment looks for a cancel request (default 1 s). */
  cancelPollMs?: number;
}

/** One deploy or rollback run: its steps (built once the site is known), the secrets to redact, the cancel signal. */
export interface DeployRun {
  secrets: string[];
  progress: DeployProgress;
  steps(site: ProvisionedSite): Step[];
  /** Stops watching for a cancel request. */
  close(): void;
}

/**
 * Builds a deploy or rollback run from the database: the deployment row the operation names, the
 * site's source (its clone URL, deploy key or profile token opened from their sealed form only
 * here), its deploy settings and its environment. Every opened secret is returned for the
 * operation log's redactor. The DeploySteps port (provisioning/deploy) turns the plan into steps.
 */
export async function prepareDeployRun(
  deps: DeployJobDeps,
  op: Database['operations'],
  site: Database['sites'],
): Promise<DeployRun> {
  const { db } = deps;
  const params = JSON.parse(op.params) as { deployment?: string };
  const deployment = await db
    .selectFrom('deployments')
    .selectAll()
    .where('uuid', '=', params.deployment ?? '')
    .executeTakeFirstOrThrow();
  const progress = watchCancel(deps, deployment.uuid);
  const ports = deps.deploySteps;
  const noPort = () =>
    new Error('this Siteplane has no deploy steps wired (SiteJobDeps.deploySteps): deployments cannot run on servers yet');
  if (op.kind === 'rollback') {
    return {
      secrets: [],
      progress: progress.progress,
      close: progress.close,
      steps: (provisioned) => {
        if (!ports) throw noPort();
        return ports.rollback(provisioned, { deploymentUuid: deployment.uuid, release: deployment.release });
      },
    };
  }
  const type = deployabilityOf(site.type as SiteTypeId);
  if (!type.deployable) throw new Error(type.reason);
  const [source, { settings }, env] = await Promise.all([
    deployment.source_kind === 'artifact'
      ? artifactSource(deps, deployment)
      : openSource(db, deps.secrets, site.uuid, deployment),
    loadDeploySettings(db, site, type.defaults),
    openEnvironment(db, deps.secrets, site.uuid),
  ]);
  const keptReleases = await earlierKeptReleases(db, site.uuid, deployment.uuid, settings.keepReleases);
  // An artifact arrives built: no build command, and no after-fetch hooks (the install stage:
  // npm ci, composer install and the user's own); before- and after-activate hooks run as for git.
  const built = source.source.kind === 'artifact';
  const hooks = built ? settings.hooks.filter((h) => h.stage !== 'after-fetch') : settings.hooks;
  const ranMigrations = hooks.some((h) => h.enabled && isMigrationHook(h)) ? 1 : 0;
  await db
    .updateTable('deployments')
    .set({ environment_hash: env.hash, ran_migrations: ranMigrations })
    .where('uuid', '=', deployment.uuid)
    .execute();
  const plan: DeployPlan = {
    deploymentUuid: deployment.uuid,
    release: deployment.release,
    source: source.source,
    buildCommand: built ? null : settings.buildCommand,
    artifactPath: settings.artifactPath,
    hooks: hooks.map((h) => ({ ...h })),
    sharedPaths: settings.sharedPaths.map((p) => ({ ...p })),
    environment: { build: env.build, runtime: env.runtime },
    keepReleases: settings.keepReleases,
    keptReleases,
    healthCheck: { ...settings.healthCheck },
    startCommand: settings.startCommand,
  };
  return {
    secrets: [...source.secrets, ...env.values],
    progress: progress.progress,
    close: progress.close,
    steps: (provisioned) => {
      if (!ports) throw noPort();
      return ports.deploy(provisioned, plan, progress.progress);
    },
  };
}

/**
 * The releases of the site's newest keep − 1 successful deploys before this one: with this one,
 * the releases POST …/rollback offers once it succeeds (use-cases/deployments/rollback.ts), so
 * prune on the server keeps exactly those.
 */
async function earlierKeptReleases(db: Kysely<Database>, siteUuid: string, deploymentUuid: string, keep: number) {
  if (keep <= 1) return [];
  const rows = await db
    .selectFrom('deployments')
    .innerJoin('operations', 'operations.uuid', 'deployments.operation_uuid')
    .select('deployments.release')
    .where('deployments.site_uuid', '=', siteUuid)
    .where('deployments.kind', '=', 'deploy')
    .where('operations.status', '=', 'succeeded')
    .where('deployments.uuid', '!=', deploymentUuid)
    .orderBy('deployments.created_at', 'desc')
    .orderBy('deployments.uuid', 'desc')
    .limit(keep - 1)
    .execute();
  return rows.map((r) => r.release);
}

/** An uploaded artifact: the data directory's file of this deployment, as received (no secrets). */
async function artifactSource(
  deps: DeployJobDeps,
  deployment: Database['deployments'],
): Promise<{ source: DeploySource; secrets: string[] }> {
  if (!deps.artifacts) throw new Error('this Siteplane has no artifact store wired (DeployJobDeps.artifacts)');
  if (deployment.artifact_sha256 === null || deployment.artifact_bytes === null)
    throw new Error('the deployment has no artifact recorded');
  return {
    source: {
      kind: 'artifact',
      file: deps.artifacts.pathOf(deployment.uuid),
      sha256: deployment.artifact_sha256,
      bytes: Number(deployment.artifact_bytes),
    },
    secrets: [],
  };
}

/** The https user a provider expects beside a token (its documented token-over-git usernames). */
const HTTPS_USER: Record<string, string> = { github: 'x-access-token', gitlab: 'oauth2', bitbucket: 'x-token-auth' };

async function openSource(
  db: Kysely<Database>,
  secrets: SecretBox,
  siteUuid: string,
  deployment: Database['deployments'],
): Promise<{ source: DeploySource; secrets: string[] }> {
  const row = await db.selectFrom('site_sources').selectAll().where('site_uuid', '=', siteUuid).executeTakeFirst();
  if (!row) throw new Error('the site has no source any more (it was unbound after this deployment was queued)');
  let url = secrets.open(row.clone_url_enc);
  const found: string[] = [];
  let credentials: Extract<DeploySource, { kind: 'git' }>['credentials'] = null;
  if (row.auth === 'deploy_key' && row.deploy_private_key_enc) {
    const key = secrets.open(row.deploy_private_key_enc);
    credentials = { sshPrivateKey: key };
    found.push(key);
  } else if (row.auth === 'token' && row.provider === 'git') {
    // Credentials written into a git profile's https remote: moved out of the URL for the fetch.
    const parsed = new URL(url);
    const user = decodeURIComponent(parsed.username);
    const raw = parsed.password;
    const token = decodeURIComponent(raw);
    parsed.username = '';
    parsed.password = '';
    url = parsed.href;
    credentials = { httpsUser: user || 'git', httpsToken: token };
    found.push(token, raw);
  } else if (row.auth === 'token') {
    const profile = await db.selectFrom('vc_profiles').selectAll().where('uuid', '=', row.vc_profile_uuid).executeTakeFirst();
    if (!profile?.token_enc)
      throw new Error('the site’s version-control profile is gone or has no token; bind the source again (PUT …/source)');
    const token = secrets.open(profile.token_enc);
    credentials = { httpsUser: HTTPS_USER[row.provider] ?? profile.account_login ?? 'git', httpsToken: token };
    found.push(token);
  }
  // Checked again here: the stored URL is handed to git on the server.
  if (!parseGitRemote(url)) throw new Error('the site’s stored clone URL is not a supported git remote');
  return {
    source: {
      kind: 'git',
      url,
      branch: deployment.branch ?? row.branch,
      commit: deployment.requested_commit,
      appFolder: row.app_folder,
      credentials,
    },
    secrets: found,
  };
}

/**
 * The progress the deploy steps report to: the commit lands on the deployment row; the cancel
 * signal fires once a cancel request is stored (polled, as requests may come to another process).
 */
function watchCancel(deps: DeployJobDeps, deploymentUuid: string): { progress: DeployProgress; close(): void } {
  const controller = new AbortController();
  const check = async () => {
    const row = await deps.db
      .selectFrom('deployments')
      .select('cancel_requested_at')
      .where('uuid', '=', deploymentUuid)
      .executeTakeFirst();
    if (row?.cancel_requested_at && !controller.signal.aborted) controller.abort(new DeployCancelled());
  };
  const timer = setInterval(() => void check().catch(() => undefined), deps.cancelPollMs ?? 1_000);
  timer.unref();
  return {
    progress: {
      cancelled: controller.signal,
      async commitResolved(commit) {
        await deps.db
          .updateTable('deployments')
          .set({
            commit_sha: commit.sha.slice(0, 64),
            commit_message: commit.message.slice(0, 2000),
            commit_author: commit.author.slice(0, 200),
          })
          .where('uuid', '=', deploymentUuid)
          .execute();
      },
    },
    close: () => clearInterval(timer),
  };
}

/** Before each step: a cancel request stored since the last poll counts too. */
export async function cancelRequested(
  db: Kysely<Database>,
  run: DeployRun,
  deploymentOp: Database['operations'],
): Promise<boolean> {
  if (run.progress.cancelled.aborted) return true;
  const params = JSON.parse(deploymentOp.params) as { deployment?: string };
  const row = await db
    .selectFrom('deployments')
    .select('cancel_requested_at')
    .where('uuid', '=', params.deployment ?? '')
    .executeTakeFirst();
  return row?.cancel_requested_at != null;
}
