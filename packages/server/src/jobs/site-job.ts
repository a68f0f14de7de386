import type { SiteTypeId } from '@siteplane/contract';
import type { Kysely } from 'kysely';
import type { Clock } from '../app/clock.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { EMPTY_FACTS, type ServerFacts } from '../domain/servers/facts.js';
import type { DeploySteps } from '../provisioning/deploy/plan.js';
import type { Executor } from '../provisioning/executor.js';
import type { ProvisionedSite, ProvisioningSettings, Recipe, Step, StepContext } from '../provisioning/step.js';
import type { ArtifactStore } from '../storage/artifact-store.js';
import { type ChangeNotifier, operationTopic } from '../storage/change-notifier.js';
import { announceEvents } from '../storage/event-log.js';
import { ledgerFor, resourceUsedByOtherSite } from '../storage/ledger-store.js';
import { OperationJournal, redactor } from '../storage/operation-journal.js';
import type { Database } from '../storage/schema.js';
import { mergeServerFacts } from '../storage/server-facts.js';
import { cancelRequested, DeployCancelled, type DeployRun, isDeployKind, prepareDeployRun } from './deploy-job.js';
import { DeploySlots } from './deploy-slots.js';
import { abandon, type OperationRun, recordFailure, recordGivenUp, recordSuccess } from './operation-outcome.js';
import { type JobRow, stillHolds } from './queue.js';
import type { NamedLocks } from './server-locks.js';
import { type JobSignal, LeaseLost, TransientJobError } from './worker.js';

type ServerRow = Database['servers'];

export interface SiteJobDeps {
  db: Kysely<Database>;
  secrets: SecretBox;
  clock: Clock;
  recipes: (type: SiteTypeId) => Recipe;
  /** Opens an executor for a server; `log` receives what a dry-run executor would run. */
  executorFor(server: ServerRow, log: (line: string) => void): Promise<Executor>;
  /** Reads the server's facts anew before a job (ssh/local); dry-run servers keep their declared ones. */
  detectFacts(exec: Executor, server: ServerRow): Promise<ServerFacts | null>;
  settings: ProvisioningSettings;
  locks: NamedLocks;
  /** Told whenever a site's or operation's status changed (list cache invalidation). */
  siteChanged(serverUuid: string): void;
  /** TLS (issue 4: use-cases/ssl/site-tls.ts): certificate operations, temporary-domain DNS records. */
  extension?: SiteJobExtension;
  /** Told of each stored step, line and status of the operation (its event stream). */
  changes?: ChangeNotifier;
  /**
   * Deployments: the steps on the server for `deploy` and `rollback` operations (provisioning/deploy,
   * wired by app/). Absent: such operations fail with a clear message.
   */
  deploySteps?: DeploySteps;
  /** Uploaded deploy artifacts: read by an artifact deploy, removed once its deployment ended. */
  artifacts?: ArtifactStore;
  /** SITEPLANE_DEPLOYS_PER_SERVER: deploys and rollbacks running at once on one server (default: one). */
  deploySlots?: DeploySlots;
  /** How often a running deployment looks for a cancel request (default 1 s; tests shorten it). */
  cancelPollMs?: number;
  /** Told of each step's and each operation's outcome (the service's metrics). */
  observe?: SiteJobObserver;
  /**
   * Work at providers a site's deletion ends with (its deploy key registered at a hosted provider,
   * removed there: use-cases/deployments/deploy-key-cleanup.ts); none when absent.
   */
  afterDelete?: (site: Database['sites']) => Promise<Step[]>;
}

export interface SiteJobObserver {
  step(operationKind: string, stepName: string, outcome: 'succeeded' | 'failed', seconds: number): void;
  operation(kind: string, outcome: 'succeeded' | 'failed' | 'cancelled'): void;
}

/** Work another module adds to site operations, without the runner knowing what it is. */
export interface SiteJobExtension {
  /** The steps of an operation, given the recipe's (none for an `ssl` operation). */
  steps(job: { op: Database['operations']; site: Database['sites']; server: ServerRow }, recipeSteps: Step[]): Step[];
  /** In the transaction that marks a site installed (queues its first certificate). */
  created(trx: Kysely<Database>, site: Database['sites'], now: string): Promise<void>;
  /** An `ssl` operation failed: the site stays as it is; the extension records why (in the failure's transaction). */
  sslFailed(trx: Kysely<Database>, op: Database['operations'], site: Database['sites'], error: unknown): Promise<void>;
}

/**
 * Runs one site operation (create or delete): every recipe step in order, journaled. Stops between
 * steps once the worker's lease is lost, and records the outcome only while its claim holds the job.
 */
export async function runSiteJob(deps: SiteJobDeps, job: JobRow, signal: JobSignal): Promise<void> {
  try {
    await runOperation(deps, job, signal);
  } finally {
    // Whatever the outcome (stored by now), readers of the operation's stream read it again.
    deps.changes?.notify(operationTopic(job.operation_uuid));
    // An uploaded artifact is kept while its deploy may still run (a transient failure runs again).
    if (job.kind === 'site.deploy') await deps.artifacts?.sweep(deps.db).catch(() => undefined);
  }
}

async function runOperation(deps: SiteJobDeps, job: JobRow, signal: JobSignal): Promise<void> {
  const { db } = deps;
  const op = await db.selectFrom('operations').selectAll().where('uuid', '=', job.operation_uuid).executeTakeFirstOrThrow();
  const site = await db.selectFrom('sites').selectAll().where('uuid', '=', op.site_uuid).executeTakeFirstOrThrow();
  const server = await db.selectFrom('servers').selectAll().where('uuid', '=', site.server_uuid).executeTakeFirstOrThrow();
  const user = await db
    .selectFrom('server_users')
    .select('username')
    .where('uuid', '=', site.server_user_uuid)
    .executeTakeFirstOrThrow();
  const secrets = site.secrets_enc
    ? deps.secrets.openJson<{ databasePassword?: string; wpAdminPassword?: string }>(site.secrets_enc)
    : {};
  // Deployments: the plan is built from the database here, so every secret it opens (a token, a
  // deploy key, environment values) is known to the redactor before the first line is logged.
  let deployRun: DeployRun | null = null;
  let deployError: unknown = null;
  if (isDeployKind(op.kind)) {
    try {
      deployRun = await prepareDeployRun(deps, op, site);
    } catch (error) {
      deployError = error;
    }
  }
  const redact = redactor([secrets.databasePassword, secrets.wpAdminPassword, ...(deployRun?.secrets ?? [])]);
  const changed = () => deps.changes?.notify(operationTopic(op.uuid));
  const journal = await OperationJournal.open(db, op.uuid, redact, changed, {
    team: site.team_uuid,
    site: site.uuid,
    kind: op.kind,
    announce: () => announceEvents(deps.changes, site.team_uuid),
  });
  const now = () => deps.clock.now().toISOString();
  const run: OperationRun = { deps, job, signal, journal, redact, op, site };
  // A poison job: claimed once more only to record that it is given up, before anything runs.
  if (job.attempts > job.max_attempts) {
    deployRun?.close();
    throw await recordGivenUp(run, job);
  }

  // Which process ran each attempt: with several workers, the journal shows who ran what, and when.
  journal.log(`run by ${job.locked_by ?? 'this process'} (attempt ${job.attempts})`);
  await db
    .updateTable('operations')
    .set({ status: 'running', started_at: op.started_at ?? now() })
    .where('uuid', '=', op.uuid)
    .execute();
  changed();
  if (op.kind === 'create')
    await db
      .updateTable('sites')
      .set({ status: 'installing', updated_at: now() })
      .where('uuid', '=', site.uuid)
      // A delete accepted before this create started keeps the site `deleting` (its 202 said so).
      .where('status', '!=', 'deleting')
      .execute();
  deps.siteChanged(site.server_uuid);
  if (job.attempts > 1) journal.log(`resuming (attempt ${job.attempts})`);
  // A create after a failed one (POST …/retry): the site keeps that failure until this one succeeds.
  const earlier =
    op.kind === 'create' && site.failure ? (JSON.parse(site.failure) as { operation: string; step: string | null }) : null;
  if (earlier && earlier.operation !== op.uuid)
    journal.log(
      `retrying after operation ${earlier.operation} failed at ${earlier.step ? `step ${earlier.step}` : 'setup'}; steps already done are checked and left as they are`,
    );

  const provisioned = provisionedSite(site, user.username, secrets);
  const params = JSON.parse(op.params) as { deleteDatabase?: boolean };
  let steps: Step[] = [];
  let exec: Executor;
  try {
    exec = await deps.executorFor(server, (line) => journal.log(line));
  } catch (error) {
    deployRun?.close();
    const message = `cannot reach server ${server.name}: ${(error as Error).message}`;
    if (job.attempts < job.max_attempts) {
      journal.log(`${message}; trying again later`);
      await journal.flush();
      throw new TransientJobError(message);
    }
    await recordFailure(run, null, -1, new Error(message));
    deps.observe?.operation(op.kind, 'failed');
    throw new Error(message);
  }
  let current = -1;
  try {
    const recipe = deps.recipes(site.type as SiteTypeId);
    steps = isDeployKind(op.kind)
      ? deployStepsOf(deployRun, deployError, provisioned)
      : op.kind === 'create'
        ? recipe.create(provisioned)
        : op.kind === 'delete'
          ? [
              ...recipe.remove(provisioned, { deleteDatabase: params.deleteDatabase === true }),
              ...((await deps.afterDelete?.(site)) ?? []),
            ]
          : [];
    if (deps.extension) steps = deps.extension.steps({ op, site, server }, steps);
    let facts: ServerFacts = { ...EMPTY_FACTS, ...(JSON.parse(server.facts) as ServerFacts) };
    const detected = await deps.detectFacts(exec, server);
    if (detected) {
      facts = detected;
      await db
        .updateTable('servers')
        .set({ facts: JSON.stringify(detected), facts_source: 'detected', facts_at: now() })
        .where('uuid', '=', server.uuid)
        .execute();
    }
    const ctx: StepContext = {
      exec,
      site: provisioned,
      facts,
      ledger: ledgerFor(db, site.uuid),
      settings: deps.settings,
      log: (line) => journal.log(line),
      withServerLock: (name, fn) => deps.locks.withLock(`${server.uuid}:${name}`, fn),
      sharedResourceInUse: (entry) => resourceUsedByOtherSite(db, server.uuid, site.uuid, entry),
      updateFacts: async (patch) => {
        const merged = await deps.locks.withLock(`${server.uuid}:facts`, () => mergeServerFacts(db, server.uuid, patch, now()));
        Object.assign(facts, merged);
      },
    };
    const holds = (trx: Kysely<Database>) => stillHolds(trx, job);
    const runSteps = async () => {
      // The step that succeeded and whose end is stored with the next step's start (one transaction).
      let succeeded: number | null = null;
      for (const [idx, step] of steps.entries()) {
        // Once another claim runs the job, this run neither starts a step nor reports one.
        if (signal.leaseLost) throw new LeaseLost(job);
        const cancel = deployRun !== null && (await cancelRequested(db, deployRun, op));
        // The claim is read again in the transaction that starts the step: a worker waking from a
        // stall may reach it before its heartbeat noticed the lease ran out.
        if (!(await journal.stepBoundary(succeeded, cancel ? null : { idx, name: step.name }, holds))) throw new LeaseLost(job);
        succeeded = null;
        current = idx;
        if (cancel) throw new DeployCancelled();
        ctx.current = { operation: op.uuid, step: `${idx} ${step.name}` };
        const startedAt = performance.now();
        try {
          await step.run(ctx);
          deps.observe?.step(op.kind, step.name, 'succeeded', (performance.now() - startedAt) / 1000);
        } catch (error) {
          deps.observe?.step(op.kind, step.name, 'failed', (performance.now() - startedAt) / 1000);
          // A step stopped by the cancel signal failed because it was told to: the deployment is cancelled.
          if (deployRun?.progress.cancelled.aborted) throw new DeployCancelled();
          throw error;
        }
        if (signal.leaseLost) throw new LeaseLost(job);
        succeeded = idx;
      }
      if (succeeded !== null && !(await journal.stepBoundary(succeeded, null, holds))) throw new LeaseLost(job);
    };
    // At most SITEPLANE_DEPLOYS_PER_SERVER deployments run their steps on one server at once.
    if (isDeployKind(op.kind)) await (deps.deploySlots ?? new DeploySlots(deps.locks, 1)).run(server.uuid, runSteps);
    else await runSteps();
  } catch (error) {
    if (error instanceof DeployCancelled && !signal.leaseLost) {
      error.steps = { names: steps.map((s) => s.name), from: Math.max(0, current) };
      journal.log('cancelled by request; the steps from here on are aborted and the live release keeps serving');
      await recordFailure(run, steps[current]?.name ?? null, current, error);
      deps.observe?.operation(op.kind, 'cancelled');
      return;
    }
    // Whatever failed, a run that lost its claim reports nothing: the job's new owner does.
    if (signal.leaseLost || error instanceof LeaseLost) throw await abandon(run);
    await recordFailure(run, steps[current]?.name ?? null, current, error);
    deps.observe?.operation(op.kind, 'failed');
    // Redacted: the worker logs this (and stores it as last_error when it queues another attempt).
    throw error instanceof TransientJobError
      ? error
      : new Error(`operation ${op.uuid} failed: ${redact((error as Error).message)}`);
  } finally {
    deployRun?.close();
    await exec.close().catch(() => {});
  }
  await journal.flush();
  await recordSuccess(run, params.deleteDatabase === true);
  deps.observe?.operation(op.kind, 'succeeded');
}

function provisionedSite(
  site: Database['sites'],
  username: string,
  secrets: { databasePassword?: string; wpAdminPassword?: string },
): ProvisionedSite {
  const ssl = JSON.parse(site.ssl) as { enabled: boolean; provider: string | null; wildcard: boolean; include_www: boolean };
  return {
    uuid: site.uuid,
    type: site.type as SiteTypeId,
    domain: site.domain,
    user: username,
    options: JSON.parse(site.options) as Record<string, unknown>,
    ssl: { enabled: ssl.enabled, provider: ssl.provider, wildcard: ssl.wildcard, includeWww: ssl.include_www },
    database:
      site.db_engine && site.db_user
        ? {
            createDatabase: site.db_create === 1,
            name: site.db_name,
            user: site.db_user,
            password: secrets.databasePassword ?? '',
            engine: site.db_engine as NonNullable<ProvisionedSite['database']>['engine'],
            installEngine: site.db_install_engine === 1,
            useCachingSha2Password: site.db_sha2 === 1,
          }
        : null,
    runtime: JSON.parse(site.runtime) as ProvisionedSite['runtime'],
    port: site.port,
    secrets: secrets.wpAdminPassword ? { wpAdminPassword: secrets.wpAdminPassword } : {},
  };
}

/** A deploy or rollback's steps, or why there are none (thrown, so the operation fails naming it). */
function deployStepsOf(run: DeployRun | null, error: unknown, site: ProvisionedSite): Step[] {
  if (!run) throw error instanceof Error ? error : new Error(String(error));
  return run.steps(site);
}
