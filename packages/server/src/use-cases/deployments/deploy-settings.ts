import type { Static } from '@sinclair/typebox';
import type { PatchDeploySettingsBody } from '@siteplane/contract';
import type { Kysely } from 'kysely';
import type { Actor } from '../../domain/auth/actor.js';
import {
  applySettingsPatch,
  type DeploySettings,
  type DeploySettingsOverrides,
  effectiveSettings,
} from '../../domain/deployments/deploy-settings.js';
import { PLATFORM_STEPS, type TypeDeployDefaults } from '../../domain/deployments/type-defaults.js';
import { ValidationError } from '../../domain/field-errors.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { deployableSite, type SiteRow } from './deploy-site.js';

/** The site's effective settings (read by the deploy job too, which builds the plan from them). */
export async function loadDeploySettings(
  db: Kysely<Database>,
  site: SiteRow,
  defaults: TypeDeployDefaults,
): Promise<{ settings: DeploySettings; updatedAt: string | null; overrides: DeploySettingsOverrides }> {
  const row = await db.selectFrom('site_deploy_settings').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
  const overrides = row ? (JSON.parse(row.settings) as DeploySettingsOverrides) : {};
  const options = JSON.parse(site.options) as Record<string, unknown>;
  return { settings: effectiveSettings(overrides, defaults, options), updatedAt: row?.updated_at ?? null, overrides };
}

function settingsRecord(site: string, s: DeploySettings, updatedAt: string | null) {
  return {
    site,
    build_command: s.buildCommand,
    artifact_path: s.artifactPath,
    hooks: s.hooks,
    shared_paths: s.sharedPaths,
    keep_releases: s.keepReleases,
    health_check: { path: s.healthCheck.path, timeout_seconds: s.healthCheck.timeoutSeconds },
    start_command: s.startCommand,
    platform_steps: [...PLATFORM_STEPS],
    defaults: s.defaults,
    updated_at: updatedAt,
  };
}

/** GET /api/v1/sites/<uuid>/deploy-settings. */
export async function getDeploySettings(deps: UseCaseDeps, actor: Actor, siteUuid: string) {
  const { site, defaults } = await deployableSite(deps.db, { actor }, siteUuid);
  const { settings, updatedAt } = await loadDeploySettings(deps.db, site, defaults);
  return settingsRecord(site.uuid, settings, updatedAt);
}

/**
 * PATCH /api/v1/sites/<uuid>/deploy-settings: each field given replaces that setting (hooks: the
 * whole ordered list, so adding, reordering and disabling are one request), null resets it to the
 * default. The body's shape was checked against its schema; rules across items here.
 */
export async function patchDeploySettings(
  deps: UseCaseDeps,
  actor: Actor,
  siteUuid: string,
  body: Static<typeof PatchDeploySettingsBody>,
) {
  const { site, defaults } = await deployableSite(deps.db, { actor }, siteUuid);
  const { overrides } = await loadDeploySettings(deps.db, site, defaults);
  const { overrides: next, errors } = applySettingsPatch(overrides, body, defaults);
  if (errors.length > 0) throw new ValidationError(errors);
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('site_deploy_settings').where('site_uuid', '=', site.uuid).execute();
    await trx
      .insertInto('site_deploy_settings')
      .values({ site_uuid: site.uuid, settings: JSON.stringify(next), updated_at: now })
      .execute();
  });
  const options = JSON.parse(site.options) as Record<string, unknown>;
  return settingsRecord(site.uuid, effectiveSettings(next, defaults, options), now);
}
