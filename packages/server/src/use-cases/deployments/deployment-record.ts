import type { Kysely } from 'kysely';
import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE } from '../../domain/field-errors.js';
import { keyset } from '../../storage/paging.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { deployableSite } from './deploy-site.js';

type DeploymentRow = Database['deployments'];
type OperationRow = Pick<Database['operations'], 'uuid' | 'kind' | 'status' | 'started_at' | 'finished_at'>;

/**
 * A deployment as the API shows it. Its status is its operation's (queued → running → succeeded |
 * failed | cancelled), so the two can never disagree; times come from the operation too.
 */
/**
 * A new deployments row: what a deploy or a rollback says about itself, the rest empty until its
 * job fills it (commit, environment hash, migrations) or a later request marks it.
 */
export function newDeploymentRow(
  row: Pick<
    DeploymentRow,
    'uuid' | 'site_uuid' | 'team_uuid' | 'operation_uuid' | 'kind' | 'trigger' | 'release' | 'from_release' | 'created_at'
  > &
    Partial<DeploymentRow>,
): DeploymentRow {
  return {
    branch: null,
    requested_commit: null,
    commit_sha: null,
    commit_message: null,
    commit_author: null,
    environment_hash: null,
    ran_migrations: 0,
    rollback_info: null,
    release_bad: 0,
    superseded_by: null,
    cancel_requested_at: null,
    source_kind: 'git',
    artifact_sha256: null,
    artifact_bytes: null,
    ...row,
  };
}

export function deploymentRecord(d: DeploymentRow, op: OperationRow) {
  const duration = op.started_at && op.finished_at ? Math.max(0, Date.parse(op.finished_at) - Date.parse(op.started_at)) : null;
  return {
    uuid: d.uuid,
    site: d.site_uuid,
    status: op.status,
    trigger: d.trigger,
    branch: d.branch,
    requested_commit: d.requested_commit,
    source_kind: d.source_kind,
    artifact: d.artifact_sha256 !== null ? { sha256: d.artifact_sha256, bytes: Number(d.artifact_bytes ?? 0) } : null,
    commit: d.commit_sha !== null ? { sha: d.commit_sha, message: d.commit_message ?? '', author: d.commit_author ?? '' } : null,
    release: d.release,
    operation: { uuid: op.uuid, kind: op.kind, status: op.status },
    superseded_by: d.superseded_by,
    cancel_requested: d.cancel_requested_at !== null,
    rollback:
      d.kind === 'rollback'
        ? {
            from_release: d.from_release,
            ...((d.rollback_info ? JSON.parse(d.rollback_info) : { environment_changed: false, migrations_changed: false }) as {
              environment_changed: boolean;
              migrations_changed: boolean;
            }),
          }
        : null,
    release_bad: d.release_bad === 1,
    created_at: d.created_at,
    started_at: op.started_at,
    finished_at: op.finished_at,
    duration_ms: duration,
  };
}
export type DeploymentRecord = ReturnType<typeof deploymentRecord>;

const OP_COLUMNS = [
  'operations.uuid',
  'operations.kind',
  'operations.status',
  'operations.started_at',
  'operations.finished_at',
] as const;

/** A deployment and its operation, reached through the actor's teams (another tenant's is not found). */
export async function loadDeployment(db: Kysely<Database>, actor: Actor | null, uuid: string) {
  if (!UUID_RE.test(uuid)) throw notFound('Deployment');
  let query = db.selectFrom('deployments').selectAll().where('uuid', '=', uuid.toLowerCase());
  if (actor) query = query.where('team_uuid', 'in', actor.teamUuids);
  const d = await query.executeTakeFirst();
  if (!d) throw notFound('Deployment');
  const op = await db.selectFrom('operations').select(OP_COLUMNS).where('uuid', '=', d.operation_uuid).executeTakeFirstOrThrow();
  return { d, op };
}

/** GET /api/v1/deployments/<uuid>. */
export async function getDeployment(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const { d, op } = await loadDeployment(deps.db, actor, uuid);
  return deploymentRecord(d, op);
}

/** GET /api/v1/sites/<uuid>/deployments: oldest first, cursor-paged (ARCHITECTURE §2 Lists). */
export async function listDeployments(deps: UseCaseDeps, actor: Actor, siteUuid: string, page: PageRequest) {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  const rows = await keyset(
    deps.db.selectFrom('deployments').selectAll().where('site_uuid', '=', site.uuid),
    'deployments',
    page,
  ).execute();
  const ops = rows.length
    ? await deps.db
        .selectFrom('operations')
        .select(OP_COLUMNS)
        .where(
          'uuid',
          'in',
          rows.map((r) => r.operation_uuid),
        )
        .execute()
    : [];
  const byUuid = new Map(ops.map((o) => [o.uuid, o]));
  return toPage(rows, page, (row) => deploymentRecord(row, byUuid.get(row.operation_uuid) as OperationRow));
}

/** The release serving now: that of the site's latest successful deployment or rollback (null before the first). */
export async function liveRelease(db: Kysely<Database>, siteUuid: string): Promise<string | null> {
  const row = await db
    .selectFrom('deployments')
    .innerJoin('operations', 'operations.uuid', 'deployments.operation_uuid')
    .select('deployments.release')
    .where('deployments.site_uuid', '=', siteUuid)
    .where('operations.status', '=', 'succeeded')
    .orderBy('operations.finished_at', 'desc')
    .orderBy('deployments.created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.release ?? null;
}
