import type { Kysely, Updateable } from 'kysely';
import { UserCommandFailed } from '../provisioning/deploy/user-command.js';
import { CommandFailed } from '../provisioning/executor.js';
import { ConfigTestFailed } from '../provisioning/steps/config-file.js';
import { announceEvents } from '../storage/event-log.js';
import { ledgerFor } from '../storage/ledger-store.js';
import type { OperationJournal } from '../storage/operation-journal.js';
import type { Database } from '../storage/schema.js';
import { DeployCancelled, isDeployKind } from './deploy-job.js';
import { deploymentSucceeded, markStepsAborted } from './deployment-outcome.js';
import { recordOutcomeEvents } from './outcome-events.js';
import { type JobClaim, type JobRow, updateHeldJob } from './queue.js';
import type { SiteJobDeps } from './site-job.js';
import { type JobSignal, LeaseLost, TransientJobError } from './worker.js';

/** One run of a site operation, as far as recording its outcome needs it. */
export interface OperationRun {
  deps: Pick<SiteJobDeps, 'db' | 'clock' | 'extension' | 'siteChanged' | 'secrets' | 'changes'>;
  /** The claim the run holds; the outcome is recorded only while it still holds the job. */
  job: JobClaim;
  signal: JobSignal;
  journal: OperationJournal;
  redact: (text: string) => string;
  op: Database['operations'];
  site: Database['sites'];
}

/** Every step succeeded: the operation succeeded; a create is installed, a delete is gone. */
export async function recordSuccess(run: OperationRun, deleteDatabase: boolean): Promise<void> {
  const { op, site } = run;
  const now = run.deps.clock.now().toISOString();
  await whileHeld(run, { status: 'done', lease_until: null }, async (trx) => {
    await trx
      .updateTable('operations')
      .set({ status: 'succeeded', finished_at: now, error: null })
      .where('uuid', '=', op.uuid)
      .execute();
    await recordOutcomeEvents(trx, op, site, 'succeeded', null, now);
    // A certificate operation never changes the site's status: with or without TLS it is served.
    if (op.kind === 'ssl') return;
    // Nor does a deployment: the site stays installed, serving the release it activated.
    if (isDeployKind(op.kind)) return deploymentSucceeded(trx, run.deps.secrets, op, site, now);
    if (op.kind === 'create') {
      await trx
        .updateTable('sites')
        .set({ status: 'installed', failure: null, updated_at: now })
        .where('uuid', '=', site.uuid)
        // A delete accepted meanwhile (queued after this create) keeps the site `deleting`.
        .where('status', '!=', 'deleting')
        .execute();
      await run.deps.extension?.created(trx, site, now);
      return;
    }
    // Deleted only now that cleanup succeeded. A kept database stays taken on the server.
    await trx
      .updateTable('sites')
      .set({ status: 'deleted', deleted_at: now, failure: null, updated_at: now })
      .where('uuid', '=', site.uuid)
      .execute();
    for (const table of ['server_databases', 'server_database_users'] as const) {
      if (deleteDatabase) await trx.deleteFrom(table).where('site_uuid', '=', site.uuid).execute();
      else await trx.updateTable(table).set({ site_uuid: null }).where('site_uuid', '=', site.uuid).execute();
    }
  });
}

/**
 * A step (or reaching the server) failed: journaled with the end of the command's output. A
 * transient failure stops there (the worker queues another attempt); otherwise the operation and
 * the site are failed, with what failed and, for a delete, what is left.
 */
export async function recordFailure(run: OperationRun, step: string | null, idx: number, error: unknown): Promise<void> {
  const { deps, journal, op, site } = run;
  const exitCode =
    error instanceof CommandFailed
      ? error.result.code
      : error instanceof ConfigTestFailed || error instanceof UserCommandFailed
        ? error.exitCode
        : null;
  // The message may quote a command's output, and it is stored and shown outside the log too.
  const message = run.redact(error instanceof Error ? error.message : String(error));
  journal.log(`step ${step ?? '(setup)'} failed: ${message}`);
  const commandOutput =
    error instanceof CommandFailed
      ? `${error.result.stdout}\n${error.result.stderr}`
      : error instanceof ConfigTestFailed
        ? error.output
        : null;
  if (commandOutput !== null) {
    const output = commandOutput.trim().split('\n').slice(-20);
    for (const line of output) journal.log(`  | ${line}`);
  }
  await journal.flush();
  if (error instanceof TransientJobError) {
    if (idx >= 0) await journal.stepFinished(idx, 'failed', exitCode);
    return;
  }
  // What is left on the server matters (and is read) only for a delete.
  const left = op.kind === 'delete' ? await ledgerFor(deps.db, site.uuid).list() : undefined;
  const failure = { operation: op.uuid, step, exit_code: exitCode, message, left };
  const now = deps.clock.now().toISOString();
  const lastError = `operation ${op.uuid} failed: ${message}`;
  // A cancelled deployment did what was asked of it: the job is done, the operation `cancelled`.
  const cancelled = error instanceof DeployCancelled && isDeployKind(op.kind);
  const jobChange = cancelled
    ? { status: 'done' as const, lease_until: null }
    : { status: 'failed' as const, lease_until: null, last_error: lastError };
  await whileHeld(run, jobChange, async (trx) => {
    if (cancelled) await markStepsAborted(trx, op.uuid, error.steps.names, error.steps.from, now);
    else if (idx >= 0) await journal.stepFinished(idx, 'failed', exitCode, trx);
    // The site stays installed and served over HTTP (or on its previous certificate); the reason
    // commits with the operation's failure, so a client never sees one without the other.
    if (op.kind === 'ssl') await deps.extension?.sslFailed(trx, op, site, error);
    await trx
      .updateTable('operations')
      .set({ status: cancelled ? 'cancelled' : 'failed', finished_at: now, error: JSON.stringify(failure) })
      .where('uuid', '=', op.uuid)
      .execute();
    await recordOutcomeEvents(trx, op, site, cancelled ? 'cancelled' : 'failed', { step, message }, now);
    // A failed deployment leaves the site installed and its live release serving.
    if (op.kind === 'ssl' || isDeployKind(op.kind)) return;
    const failed = trx
      .updateTable('sites')
      .set({ status: op.kind === 'create' ? 'failed' : 'delete_failed', failure: JSON.stringify(failure), updated_at: now })
      .where('uuid', '=', site.uuid);
    // A create that failed while a delete waits behind it: the site stays `deleting`, as the delete's 202 said.
    await (op.kind === 'create' ? failed.where('status', '!=', 'deleting') : failed).execute();
  });
}

/**
 * A claim past max_attempts: every attempt allowed ended without an outcome, the last one (at least)
 * because its lease ran out: the worker died or stalled, maybe in the same step each time, as a
 * step that crashes the process would. Running it again could only do the same, so the job, the
 * operation and the site fail for good, naming the job and the step that was running.
 */
export async function recordGivenUp(run: OperationRun, job: Pick<JobRow, 'uuid' | 'kind' | 'max_attempts'>): Promise<Error> {
  const running = await run.deps.db
    .selectFrom('operation_steps')
    .select(['idx', 'name'])
    .where('operation_uuid', '=', run.op.uuid)
    .where('status', '=', 'running')
    .orderBy('idx', 'desc')
    .executeTakeFirst();
  const error = new Error(
    `job ${job.uuid} (${job.kind}) given up after ${job.max_attempts} attempts: the last one's lease ran out without an outcome ` +
      `(its worker crashed or stalled${running ? ` in step ${running.name}` : ''}); it is not run again`,
  );
  await recordFailure(run, running?.name ?? null, running?.idx ?? -1, error);
  return error;
}

/** The run noticed (heartbeat) that its claim was lost: it stops without recording anything. */
export async function abandon(run: OperationRun): Promise<LeaseLost> {
  const lost = new LeaseLost(run.job);
  await noteLeaseLost(run, lost);
  return lost;
}

/**
 * Records the outcome in one transaction with the job's, and only while this run's claim still
 * holds the job: the claim is checked by the UPDATE that finishes the job, so a run whose lease
 * ran out can never overwrite what the job's new owner records, whatever the interleaving. When the
 * claim was lost the transaction rolls back and LeaseLost is thrown.
 */
async function whileHeld(
  run: OperationRun,
  job: Updateable<Database['jobs']>,
  work: (trx: Kysely<Database>) => Promise<void>,
): Promise<void> {
  try {
    await run.deps.db.transaction().execute(async (trx) => {
      if (!(await updateHeldJob(trx, run.job, job))) throw new LeaseLost(run.job);
      await work(trx);
    });
  } catch (error) {
    if (error instanceof LeaseLost) await noteLeaseLost(run, error);
    throw error;
  }
  run.signal.settled = true;
  run.deps.siteChanged(run.site.server_uuid);
  announceEvents(run.deps.changes, run.site.team_uuid);
}

/** One line in the operation's log, so a reader knows why a run's last lines led nowhere. */
async function noteLeaseLost(run: OperationRun, lost: LeaseLost): Promise<void> {
  run.journal.log(`${lost.message}; this attempt stopped and recorded no outcome`);
  // The run is abandoned either way; a failed log write must not replace LeaseLost as its error.
  await run.journal.flush().catch(() => undefined);
}
