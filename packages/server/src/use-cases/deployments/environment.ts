import type { Static } from '@sinclair/typebox';
import type { PatchEnvironmentBody } from '@siteplane/contract';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Actor } from '../../domain/auth/actor.js';
import { checkEnvironmentPatch, environmentHash } from '../../domain/deployments/environment-rules.js';
import { ValidationError } from '../../domain/field-errors.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { deployableSite } from './deploy-site.js';

async function environmentRecord(db: Kysely<Database>, siteUuid: string) {
  const [rows, site] = await Promise.all([
    db
      .selectFrom('site_environment')
      .select(['key', 'scope', 'updated_at'])
      .where('site_uuid', '=', siteUuid)
      .orderBy('key')
      .execute(),
    db.selectFrom('sites').select('deploy_needed').where('uuid', '=', siteUuid).executeTakeFirstOrThrow(),
  ]);
  return { site: siteUuid, variables: rows, deploy_needed: site.deploy_needed === 1 };
}

/** GET /api/v1/sites/<uuid>/environment: keys, scopes and times; values are never returned. */
export async function getEnvironment(deps: UseCaseDeps, actor: Actor, siteUuid: string) {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  return environmentRecord(deps.db, site.uuid);
}

/**
 * PATCH /api/v1/sites/<uuid>/environment: `set` and `unset` per key (never a whole-file overwrite);
 * values sealed. A change marks the site deploy_needed until a deploy of this environment succeeds.
 * Sizes are counted from the stored values' lengths, opened here only to be measured.
 */
export async function patchEnvironment(
  deps: UseCaseDeps,
  actor: Actor,
  siteUuid: string,
  body: Static<typeof PatchEnvironmentBody>,
) {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  const set = body.set ?? {};
  const unset = body.unset ?? [];
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('site_environment')
      .select(['key', 'value_enc'])
      .where('site_uuid', '=', site.uuid)
      .execute();
    const errors = checkEnvironmentPatch(
      existing.map((e) => ({ key: e.key, bytes: Buffer.byteLength(deps.secrets.open(e.value_enc), 'utf8') })),
      set,
      unset,
    );
    if (errors.length > 0) throw new ValidationError(errors);
    if (unset.length > 0)
      await trx.deleteFrom('site_environment').where('site_uuid', '=', site.uuid).where('key', 'in', unset).execute();
    for (const [key, { value, scope }] of Object.entries(set)) {
      await trx.deleteFrom('site_environment').where('site_uuid', '=', site.uuid).where('key', '=', key).execute();
      await trx
        .insertInto('site_environment')
        .values({ site_uuid: site.uuid, key, scope, value_enc: deps.secrets.seal(value), updated_at: now })
        .execute();
    }
    if (Object.keys(set).length > 0 || unset.length > 0)
      await trx.updateTable('sites').set({ deploy_needed: 1, updated_at: now }).where('uuid', '=', site.uuid).execute();
  });
  // deploy_needed is part of the site record, which site lists cache per server.
  deps.siteLists.invalidate(site.server_uuid);
  return environmentRecord(deps.db, site.uuid);
}

/** The environment opened for a deploy job: by scope, with its hash (environment-rules.ts). */
export async function openEnvironment(db: Kysely<Database>, secrets: SecretBox, siteUuid: string) {
  const rows = await db.selectFrom('site_environment').selectAll().where('site_uuid', '=', siteUuid).execute();
  const variables = rows.map((r) => ({ key: r.key, scope: r.scope, value: secrets.open(r.value_enc) }));
  const build: Record<string, string> = {};
  const runtime: Record<string, string> = {};
  for (const v of variables) (v.scope === 'build' ? build : runtime)[v.key] = v.value;
  return { build, runtime, values: variables.map((v) => v.value), hash: environmentHash(siteUuid, variables) };
}

/** The current environment's hash without keeping values (rollback compares it with the target's). */
export async function currentEnvironmentHash(db: Kysely<Database>, secrets: SecretBox, siteUuid: string): Promise<string> {
  return (await openEnvironment(db, secrets, siteUuid)).hash;
}
