/**
 * The pure rules of deployments: settings patches (reset, platform step names, nested shared
 * paths), environment limits and fingerprint, release names, and the per-type table.
 */
import { SITE_TYPE_IDS } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { applySettingsPatch, effectiveSettings, missingSettings } from '../../src/domain/deployments/deploy-settings.js';
import { checkEnvironmentPatch, environmentHash, MAX_ENV_TOTAL_BYTES } from '../../src/domain/deployments/environment-rules.js';
import { RELEASE_NAME_RE, releaseName } from '../../src/domain/deployments/release-name.js';
import { DEFAULT_HEALTH_CHECK, deployabilityOf, isMigrationHook } from '../../src/domain/deployments/type-defaults.js';
import { installedReleaseOf } from '../../src/provisioning/deploy/adopt-installed-data.js';
import { activationOf } from '../../src/provisioning/deploy/release-paths.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';

describe('deploy settings', () => {
  const laravel = deployabilityOf('laravel');
  if (!laravel.deployable) throw new Error('laravel deploys');

  it('follows options, then the type, until a setting is given; reset returns it to the default', () => {
    const base = effectiveSettings({}, laravel.defaults, { buildCommand: 'npm run build' });
    expect(base.buildCommand).toBe('npm run build');
    const { overrides, errors } = applySettingsPatch({}, { buildCommand: '', keepReleases: 9 }, {});
    expect(errors).toEqual([]);
    expect(effectiveSettings(overrides, laravel.defaults, { buildCommand: 'npm run build' })).toMatchObject({
      buildCommand: null,
      keepReleases: 9,
      defaults: ['artifactPath', 'hooks', 'sharedPaths', 'healthCheck'],
    });
    const reset = applySettingsPatch(overrides, { reset: ['keepReleases'] }, {});
    expect(effectiveSettings(reset.overrides, laravel.defaults, {}).keepReleases).toBe(5);
  });

  it('asks Generic Port for a start command (missing until set) and refuses one on the other types', () => {
    const generic = deployabilityOf('generic-port');
    if (!generic.deployable) throw new Error('generic-port deploys');
    const unset = effectiveSettings({}, generic.defaults, { port: 9000 });
    expect(unset).toMatchObject({ startCommand: null, hooks: [], buildCommand: null });
    expect(unset.defaults).toContain('startCommand');
    expect(missingSettings(unset, generic.defaults).map((e) => `${e.field}:${e.code}`)).toEqual(['startCommand:required']);
    const { overrides, errors } = applySettingsPatch({}, { startCommand: './serve --port "$PORT"' }, generic.defaults);
    expect(errors).toEqual([]);
    const set = effectiveSettings(overrides, generic.defaults, {});
    expect(set.startCommand).toBe('./serve --port "$PORT"');
    expect(missingSettings(set, generic.defaults)).toEqual([]);
    // Laravel: refused on the field, never effective, never listed as a default, never missing.
    const refused = applySettingsPatch({}, { startCommand: 'php -S 0:80' }, laravel.defaults);
    expect(refused.errors.map((e) => `${e.field}:${e.code}`)).toEqual(['startCommand:not_allowed_for_type']);
    const own = effectiveSettings({ startCommand: 'x' }, laravel.defaults, {});
    expect(own.startCommand).toBeNull();
    expect(own.defaults).not.toContain('startCommand');
    expect(missingSettings(own, laravel.defaults)).toEqual([]);
  });

  it("Laravel's enableCache: false switches the default caches hook off; the user's own hooks are theirs", () => {
    const caches = (options: Record<string, unknown>) =>
      effectiveSettings({}, laravel.defaults, options).hooks.find((h) => h.name === 'caches')?.enabled;
    expect(caches({})).toBe(true);
    expect(caches({ enableCache: true })).toBe(true);
    expect(caches({ enableCache: false })).toBe(false);
    const own = [{ name: 'caches', command: 'php artisan optimize', stage: 'before-activate' as const, enabled: true }];
    expect(effectiveSettings({ hooks: own }, laravel.defaults, { enableCache: false }).hooks).toEqual(own);
  });

  it('refuses a field both given and reset', () => {
    expect(applySettingsPatch({}, { keepReleases: 2, reset: ['keepReleases'] }, {}).errors).toEqual([
      expect.objectContaining({ field: 'reset.0', code: 'conflicting_values' }),
    ]);
  });

  it('keeps the platform steps out of the hooks, case-insensitively', () => {
    const hook = (name: string) => ({ name, command: 'true', stage: 'after-fetch' as const, enabled: true });
    const { errors } = applySettingsPatch({}, { hooks: [hook('Prune'), hook('build'), hook('ok')] }, {});
    expect(errors.map((e) => e.field)).toEqual(['hooks.0.name', 'hooks.1.name']);
  });
});

describe('environment', () => {
  it('caps the number of keys and the total size of the values after the patch', () => {
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`K${i}`, { value: 'v' }]));
    expect(checkEnvironmentPatch([], many, []).map((e) => e.code)).toEqual(['out_of_range']);
    const big = { A: { value: 'x'.repeat(MAX_ENV_TOTAL_BYTES) } };
    expect(checkEnvironmentPatch([{ key: 'B', bytes: 1 }], big, []).map((e) => e.code)).toEqual(['too_long']);
    // Unsetting the existing key brings it under the cap.
    expect(checkEnvironmentPatch([{ key: 'B', bytes: 1 }], big, ['B'])).toEqual([]);
  });

  it('fingerprints keys, scopes and values, in any order, per site', () => {
    const a = [
      { key: 'A', scope: 'build', value: '1' },
      { key: 'B', scope: 'runtime', value: '2' },
    ];
    const h = environmentHash('site-1', a);
    expect(environmentHash('site-1', [...a].reverse())).toBe(h);
    expect(environmentHash('site-2', a)).not.toBe(h);
    expect(environmentHash('site-1', [{ ...a[0], scope: 'runtime' } as (typeof a)[0], a[1] as (typeof a)[0]])).not.toBe(h);
    expect(
      environmentHash('site-1', [
        { key: 'A', scope: 'build', value: '12' },
        { key: 'B', scope: 'runtime', value: '' },
      ]),
    ).not.toBe(
      environmentHash('site-1', [
        { key: 'A', scope: 'build', value: '1' },
        { key: 'B', scope: 'runtime', value: '2' },
      ]),
    );
  });
});

describe('types and releases', () => {
  it('has a row for every site type; WordPress, phpMyAdmin and Soketi do not deploy, each with a reason', () => {
    const refused = SITE_TYPE_IDS.filter((t) => !deployabilityOf(t).deployable);
    expect(refused.sort()).toEqual(['phpmyadmin', 'soketi', 'wordpress']);
    // The deploy steps refuse the same types (a request never gets further than its first step).
    for (const t of refused) expect(() => activationOf({ type: t } as ProvisionedSite)).toThrow(/not deployed from a repository/);
    for (const t of refused) expect((deployabilityOf(t) as { reason: string }).reason.length).toBeGreaterThan(20);
  });

  it("runs Strapi and Directus under PM2 with the installed instance's data shared, their own health routes, Directus's migrations on", () => {
    for (const t of ['strapi', 'directus'] as const) {
      expect(activationOf({ type: t } as ProvisionedSite)).toBe('process');
      expect(installedReleaseOf({ type: t })).toBe(t);
    }
    const strapi = deployabilityOf('strapi');
    const directus = deployabilityOf('directus');
    if (!strapi.deployable || !directus.deployable) throw new Error('Strapi and Directus deploy');
    expect(strapi.defaults.sharedPaths.map((p) => p.path)).toEqual(['.env', 'public/uploads', '.tmp']);
    expect(strapi.defaults).toMatchObject({ buildCommand: 'npm run build', healthCheck: { path: '/_health' } });
    expect(directus.defaults.sharedPaths.map((p) => p.path)).toEqual(['directus.config.json', 'uploads']);
    expect(directus.defaults).toMatchObject({ buildCommand: null, healthCheck: { path: '/server/health' } });
    expect(directus.defaults.hooks.find(isMigrationHook)).toMatchObject({ enabled: true, stage: 'before-activate' });
    expect(effectiveSettings({}, strapi.defaults, {}).healthCheck).toEqual({ path: '/_health', timeoutSeconds: 180 });
    const next = deployabilityOf('next-ssr');
    if (!next.deployable) throw new Error('Next SSR deploys');
    expect(effectiveSettings({}, next.defaults, {}).healthCheck).toEqual(DEFAULT_HEALTH_CHECK);
    expect(installedReleaseOf({ type: 'next-ssr' })).toBeNull();
  });

  it('makes migrations opt-in for Laravel and recognises migration hooks', () => {
    const d = deployabilityOf('laravel');
    const migrations = d.deployable ? d.defaults.hooks.find(isMigrationHook) : undefined;
    expect(migrations).toMatchObject({ enabled: false, stage: 'before-activate' });
  });

  it('names releases by time and deployment, sortable', () => {
    const a = releaseName(new Date('2026-11-26T12:13:14.567Z'), '0193f2a1-0000-7000-8000-00000a1b2c3d');
    expect(a).toBe('20261126T121314Z-a1b2c3d');
    expect(a).toMatch(RELEASE_NAME_RE);
    expect(releaseName(new Date('2026-11-26T12:13:15Z'), '0193f2a1-0000-7000-8000-000000000000') > a).toBe(true);
  });
});
