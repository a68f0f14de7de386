import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../app/clock.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import { DomainError } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { branchPasses } from '../../domain/webhooks/branch-filter.js';
import { githubReader } from '../../domain/webhooks/github.js';
import type { Headers, PushedBranch } from '../../domain/webhooks/push-reading.js';
import { hookReader } from '../../domain/webhooks/readers.js';
import type { Database } from '../../storage/schema.js';
import type { NewDelivery, WebhookDeliveries } from '../../storage/webhook-deliveries.js';
import type { DeploymentTrigger, SourceBranchOf } from '../deployments/deployment-trigger.js';
import { readTriggerBody } from './trigger-body.js';
import { triggerHashOf } from './webhook-secrets.js';

export interface HookDeps {
  db: Kysely<Database>;
  secrets: SecretBox;
  clock: Clock;
  deliveries: WebhookDeliveries;
  trigger: DeploymentTrigger;
  sourceBranchOf: SourceBranchOf;
}

export interface HookAnswer {
  status: 200 | 202;
  body: {
    delivery: string;
    outcome: 'accepted' | 'ignored';
    reason: string | null;
    duplicate: boolean;
    deployment: string | null;
  };
}

/**
 * One answer for an unknown site, a site without a webhook, an unknown provider name and a wrong
 * or missing signature: whoever lacks the secret cannot tell whether the site exists.
 */
export const noHook = (): DomainError =>
  new DomainError(
    'not_found',
    'No webhook here accepts this request: the site is unknown, its webhook is off, or the signature does not match its secret.',
  );

/** Verified against when there is no secret to verify against, so an unknown site costs the same work. */
const DUMMY_SECRET = randomBytes(32).toString('hex');

type HookRow = { site_uuid: string; secret_enc: string; branches: string | null };

/** POST /api/v1/hooks/<provider>/<site-uuid>: a provider's push hook, checked over the raw body. */
export async function receiveProviderHook(
  deps: HookDeps,
  providerName: string,
  siteParam: string,
  headers: Headers,
  body: Buffer,
  contentType = 'application/json',
): Promise<HookAnswer> {
  const reader = hookReader(providerName);
  const row =
    reader && UUID_RE.test(siteParam)
      ? await liveHooks(deps.db).where('site_webhooks.site_uuid', '=', siteParam.toLowerCase()).executeTakeFirst()
      : undefined;
  const check = (reader ?? githubReader).verify(headers, body, row ? deps.secrets.open(row.secret_enc) : DUMMY_SECRET);
  if (!row || !reader) throw noHook();
  const base = {
    site_uuid: row.site_uuid,
    provider: reader.provider,
    delivery_id: reader.deliveryId(headers),
    event: reader.event(headers),
  };
  if (check !== 'ok') {
    await record(deps, base, {
      outcome: 'rejected',
      reason: check === 'missing' ? 'missing_signature' : 'bad_signature',
      detail:
        check === 'missing'
          ? `The request has no ${reader.signatureHeader} header.`
          : `${reader.signatureHeader} does not match the site's secret (rotated, or the body was changed on the way).`,
    });
    throw noHook();
  }
  // GitHub and Gitea may be set to send `payload=<JSON>` as a form instead; the signature covers the form.
  const form = contentType.startsWith('application/x-www-form-urlencoded');
  const payload = await parseJson(
    deps,
    base,
    form ? Buffer.from(new URLSearchParams(body.toString('utf8')).get('payload') ?? '') : body,
  );
  const reading = reader.read(headers, payload);
  switch (reading.kind) {
    case 'ping':
      return ignored(deps, base, 'ping', null, 'The provider checked the hook; nothing to deploy.');
    case 'skip':
      return ignored(deps, base, reading.reason, reading.branch, SKIP_DETAIL[reading.reason]);
    case 'malformed':
      await record(deps, base, { outcome: 'rejected', reason: 'malformed_payload', detail: reading.detail });
      throw new ValidationError([{ field: 'body', code: 'invalid_value', message: reading.detail }]);
  }
  const patterns = parseBranches(row);
  const source = patterns === null ? await deps.sourceBranchOf(row.site_uuid) : null;
  const chosen = reading.branches.find((b) => branchPasses(b.branch, patterns, source));
  if (!chosen) {
    const first = reading.branches[0] as PushedBranch;
    return ignored(
      deps,
      { ...base, commit_sha: first.commit },
      'branch_filtered',
      first.branch,
      filterDetail(first.branch, patterns, source),
    );
  }
  return startDeployment(deps, { ...base, branch: chosen.branch, commit_sha: chosen.commit }, (deliveryId) =>
    deps.trigger.deployFromPush(row.site_uuid, { ...chosen, provider: reader.provider, deliveryId }),
  );
}

/** POST /api/v1/hooks/<token>: the site's secret trigger URL, for plain git hooks and CI. */
export async function receiveTrigger(deps: HookDeps, token: string, headers: Headers, body: Buffer): Promise<HookAnswer> {
  const hash = triggerHashOf(token);
  const row = hash ? await liveHooks(deps.db).where('site_webhooks.trigger_hash', '=', hash).executeTakeFirst() : undefined;
  if (!row) throw noHook();
  const idempotencyKey = headers['idempotency-key'];
  const base = {
    site_uuid: row.site_uuid,
    provider: 'trigger',
    delivery_id: typeof idempotencyKey === 'string' && /^[A-Za-z0-9{}._:-]{1,128}$/.test(idempotencyKey) ? idempotencyKey : null,
    event: 'trigger',
  };
  const payload = body.toString('utf8').trim() === '' ? {} : await parseJson(deps, base, body);
  let asked: { branch: string | null; commit: string | null };
  try {
    asked = readTriggerBody(payload);
  } catch (error) {
    await record(deps, base, { outcome: 'rejected', reason: 'invalid_body', detail: (error as Error).message });
    throw error;
  }
  const target = { ...base, branch: asked.branch, commit_sha: asked.commit };
  if (asked.branch !== null) {
    const patterns = parseBranches(row);
    const source = patterns === null ? await deps.sourceBranchOf(row.site_uuid) : null;
    // Without an explicit branch list the source's branch is what the trigger deploys anyway.
    if (patterns !== null && !branchPasses(asked.branch, patterns, source))
      return ignored(deps, target, 'branch_filtered', asked.branch, filterDetail(asked.branch, patterns, source));
    if (patterns === null && source !== null && asked.branch !== source)
      return ignored(deps, target, 'branch_filtered', asked.branch, filterDetail(asked.branch, patterns, source));
  }
  return startDeployment(deps, target, (deliveryId) =>
    deps.trigger.deployFromTrigger(row.site_uuid, { branch: asked.branch, commit: asked.commit, deliveryId }),
  );
}

type Base = Pick<NewDelivery, 'site_uuid' | 'provider' | 'delivery_id' | 'event'> &
  Partial<Pick<NewDelivery, 'branch' | 'commit_sha'>>;

/**
 * Claims the delivery id (a redelivery within a day answers `duplicate` and deploys nothing), then
 * starts the deployment. When it cannot start, the claim is given back so the provider's retry may
 * succeed, and the delivery is recorded as rejected with the reason.
 */
async function startDeployment(
  deps: HookDeps,
  base: Base,
  start: (deliveryId: string) => Promise<{ deploymentUuid: string }>,
): Promise<HookAnswer> {
  const now = deps.clock.now();
  const claimed = base.delivery_id !== null;
  if (claimed && !(await deps.deliveries.claim(base.site_uuid, base.provider, base.delivery_id as string, now))) {
    const answer = await ignored(deps, base, 'duplicate', base.branch ?? null, 'This delivery already started a deployment.');
    return { ...answer, body: { ...answer.body, duplicate: true } };
  }
  let deploymentUuid: string;
  try {
    ({ deploymentUuid } = await start(base.delivery_id ?? randomUUID()));
  } catch (error) {
    if (claimed) await deps.deliveries.release(base.site_uuid, base.provider, base.delivery_id as string);
    const detail =
      error instanceof DomainError || error instanceof ValidationError ? error.message : 'The deployment could not be started.';
    await record(deps, base, { outcome: 'rejected', reason: 'deploy_failed', detail });
    throw error;
  }
  const delivery = await record(deps, base, { outcome: 'accepted', reason: null, detail: null, deployment_uuid: deploymentUuid });
  return {
    status: 202,
    body: { delivery, outcome: 'accepted', reason: null, duplicate: false, deployment: deploymentUuid },
  };
}

async function ignored(deps: HookDeps, base: Base, reason: string, branch: string | null, detail: string): Promise<HookAnswer> {
  const delivery = await record(deps, { ...base, branch }, { outcome: 'ignored', reason, detail });
  return { status: 200, body: { delivery, outcome: 'ignored', reason, duplicate: false, deployment: null } };
}

function record(
  deps: HookDeps,
  base: Base,
  result: Pick<NewDelivery, 'outcome' | 'reason' | 'detail'> & { deployment_uuid?: string },
): Promise<string> {
  return deps.deliveries.record(
    {
      branch: null,
      commit_sha: null,
      deployment_uuid: null,
      ...base,
      ...result,
    },
    deps.clock.now(),
  );
}

async function parseJson(deps: HookDeps, base: Base, body: Buffer): Promise<unknown> {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    await record(deps, base, { outcome: 'rejected', reason: 'malformed_payload', detail: 'The body is not valid JSON.' });
    throw new DomainError('malformed_json', 'The body is not valid JSON.');
  }
}

function liveHooks(db: Kysely<Database>) {
  return db
    .selectFrom('site_webhooks')
    .innerJoin('sites', 'sites.uuid', 'site_webhooks.site_uuid')
    .where('sites.deleted_at', 'is', null)
    .select(['site_webhooks.site_uuid', 'site_webhooks.secret_enc', 'site_webhooks.branches']);
}

function parseBranches(row: HookRow): string[] | null {
  return row.branches === null ? null : (JSON.parse(row.branches) as string[]);
}

function filterDetail(branch: string, patterns: string[] | null, source: string | null): string {
  if (patterns !== null) return `${branch} is not among the branches this webhook deploys (${patterns.join(', ')}).`;
  if (source === null) return 'The site has no source branch to compare with; set the webhook’s branches.';
  return `${branch} is not the site's branch (${source}).`;
}

const SKIP_DETAIL = {
  not_push: 'Not a push event; only pushes deploy.',
  branch_deleted: 'The push deleted a branch; nothing to deploy.',
  not_branch: 'The push moved a tag or another ref, not a branch.',
} as const;
