import type { FieldError } from '@siteplane/contract';
import { DEFAULT_HEALTH_CHECK, DEFAULT_KEEP_RELEASES, PLATFORM_STEPS, type TypeDeployDefaults } from './type-defaults.js';

type Hook = TypeDeployDefaults['hooks'][number];
type SharedPath = TypeDeployDefaults['sharedPaths'][number];

/** What a user changed; a setting absent here follows the type's default (or the site's options). */
export interface DeploySettingsOverrides {
  buildCommand?: string | null;
  artifactPath?: string | null;
  hooks?: Hook[];
  sharedPaths?: SharedPath[];
  keepReleases?: number;
  healthCheck?: { path: string; timeoutSeconds: number };
  startCommand?: string;
}

export interface DeploySettings {
  buildCommand: string | null;
  artifactPath: string | null;
  hooks: Hook[];
  sharedPaths: SharedPath[];
  keepReleases: number;
  healthCheck: { path: string; timeoutSeconds: number };
  /** Generic Port's command PM2 runs (null: not set, or a type that starts itself). */
  startCommand: string | null;
  /** Names of the settings that follow a default. */
  defaults: string[];
}

const FIELDS = ['buildCommand', 'artifactPath', 'hooks', 'sharedPaths', 'keepReleases', 'healthCheck', 'startCommand'] as const;

/** The site's effective settings: the user's where set, else options.buildCommand/artifactPath, else the type's. */
export function effectiveSettings(
  overrides: DeploySettingsOverrides,
  type: TypeDeployDefaults,
  options: { buildCommand?: unknown; artifactPath?: unknown; [option: string]: unknown },
): DeploySettings {
  const fromOptions = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : null);
  return {
    buildCommand:
      overrides.buildCommand !== undefined ? overrides.buildCommand : (fromOptions(options.buildCommand) ?? type.buildCommand),
    artifactPath: overrides.artifactPath !== undefined ? overrides.artifactPath : fromOptions(options.artifactPath),
    hooks: overrides.hooks ?? defaultHooks(type, options),
    sharedPaths: overrides.sharedPaths ?? type.sharedPaths,
    keepReleases: overrides.keepReleases ?? DEFAULT_KEEP_RELEASES,
    healthCheck: overrides.healthCheck ?? type.healthCheck ?? DEFAULT_HEALTH_CHECK,
    startCommand: type.startCommand ? (overrides.startCommand ?? null) : null,
    // startCommand is a setting of the types that take one only.
    defaults: FIELDS.filter((f) => overrides[f] === undefined && (f !== 'startCommand' || type.startCommand)),
  };
}

/** The type's hooks, less those a create option switched off (`enableCache: false` keeps Laravel's caches off). */
function defaultHooks(type: TypeDeployDefaults, options: Record<string, unknown>): Hook[] {
  const off = new Set((type.hookSwitches ?? []).filter((s) => options[s.option] === false).map((s) => s.hook));
  return type.hooks.map((hook) => (off.has(hook.name) ? { ...hook, enabled: false } : hook));
}

/** Why a deploy of this site cannot start yet (a Generic Port site with no start command); empty when it can. */
export function missingSettings(settings: DeploySettings, type: TypeDeployDefaults): FieldError[] {
  if (type.startCommand !== 'required' || settings.startCommand !== null) return [];
  return [
    {
      field: 'startCommand',
      code: 'required',
      message:
        'A Generic Port site runs your start command under PM2 with PORT set: set it first (PATCH …/deploy-settings {"startCommand": "…"}).',
    },
  ];
}

/**
 * Applies a PATCH (already shape-checked by its schema): a field given replaces the setting, a
 * field named in `reset` returns to its default. Rules across items are checked here, every
 * violation at once: hook names unique and not a platform step's; shared paths unique and not
 * nested in one another; a field not both given and reset.
 */
export function applySettingsPatch(
  current: DeploySettingsOverrides,
  patch: DeploySettingsOverrides & { reset?: string[] },
  type: Pick<TypeDeployDefaults, 'startCommand'>,
): { overrides: DeploySettingsOverrides; errors: FieldError[] } {
  const next: DeploySettingsOverrides = { ...current };
  const errors: FieldError[] = [];
  if (patch.startCommand !== undefined && !type.startCommand)
    errors.push({
      field: 'startCommand',
      code: 'not_allowed_for_type',
      message: 'Only Generic Port sites take a start command; this type starts the way its framework does.',
    });
  (patch.reset ?? []).forEach((field, i) => {
    if (patch[field as keyof DeploySettingsOverrides] !== undefined)
      errors.push({ field: `reset.${i}`, code: 'conflicting_values', message: `${field} is both given and reset.` });
    delete next[field as keyof DeploySettingsOverrides];
  });
  for (const field of FIELDS) {
    const value = patch[field];
    if (value === undefined) continue;
    // An empty build command: nothing to build (not the default).
    (next as Record<string, unknown>)[field] = field === 'buildCommand' && value === '' ? null : value;
  }
  (patch.hooks ?? []).forEach((hook, i) => {
    if ((PLATFORM_STEPS as readonly string[]).includes(hook.name.toLowerCase()))
      errors.push({
        field: `hooks.${i}.name`,
        code: 'not_allowed',
        message: `${hook.name} is a platform step: it always runs at its place and is not a hook.`,
      });
    const first = (patch.hooks ?? []).findIndex((h) => h.name.toLowerCase() === hook.name.toLowerCase());
    if (first !== i)
      errors.push({
        field: `hooks.${i}.name`,
        code: 'duplicate',
        message: `Hook ${hook.name} is listed twice (first at ${first}).`,
      });
  });
  const paths = patch.sharedPaths ?? [];
  paths.forEach((entry, i) => {
    const clean = entry.path.replace(/\/+$/, '');
    paths.forEach((other, j) => {
      if (j >= i) return;
      const o = other.path.replace(/\/+$/, '');
      if (o === clean)
        errors.push({ field: `sharedPaths.${i}.path`, code: 'duplicate', message: `${entry.path} is listed twice.` });
      else if (clean.startsWith(`${o}/`) || o.startsWith(`${clean}/`))
        errors.push({
          field: `sharedPaths.${i}.path`,
          code: 'conflicting_values',
          message: `${entry.path} and ${other.path} are inside one another.`,
        });
    });
  });
  return { overrides: next, errors };
}
