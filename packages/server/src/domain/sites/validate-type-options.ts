import { DATABASE_OPTION_NAMES, DIRECTUS_RELEASE_TYPES, type SiteTypeSpec } from '@siteplane/contract';
import { type FieldErrors, isPlainObject } from '../field-errors.js';
import type { CreateSiteContext } from './create-site-context.js';

const RUNTIME_OPTIONS = new Set(['phpVersion', 'nodejsVersion']);
const CONTROL = /[\x00-\x1f\x7f]/;

export interface TypeOptions {
  options: Record<string, unknown>;
  secrets: { wpAdminPassword?: string };
  typeVersion: number | undefined;
}

/** Type-specific options of spec §2.2 and §2.5 (everything but the database and runtime ones). */
export function validateTypeOptions(
  errors: FieldErrors,
  body: Record<string, unknown>,
  opts: Record<string, unknown>,
  spec: SiteTypeSpec,
  ctx: CreateSiteContext,
): TypeOptions {
  const allowed = new Set<string>([...spec.options, 'site_type_version']);
  const dbAllowed = spec.database !== 'none';
  for (const key of Object.keys(opts)) {
    const isDb = (DATABASE_OPTION_NAMES as readonly string[]).includes(key);
    if (isDb && dbAllowed) continue;
    if (!allowed.has(key) || (key === 'site_type_version' && spec.typeVersions.length === 0)) {
      const known = isDb || RUNTIME_OPTIONS.has(key) || KNOWN_OPTIONS.has(key);
      errors.add(
        `options.${key}`,
        known ? 'not_allowed_for_type' : 'unknown_field',
        known ? `${key} does not apply to ${spec.displayName} sites.` : `"${key}" is not a site option.`,
      );
    }
  }
  for (const required of spec.requiredOptions) {
    if (opts[required] === undefined)
      errors.add(`options.${required}`, 'required', `${required} is required for ${spec.displayName}.`);
  }
  if (spec.onePerServer && ctx.taken.singletonTypes.has(spec.id)) {
    errors.add('type', 'one_per_server', `The server already has a ${spec.displayName} site; only one is allowed.`);
  }

  const options: Record<string, unknown> = {};
  const typeVersion = checkTypeVersion(errors, body, opts, spec);
  if (typeVersion !== undefined) options.site_type_version = typeVersion;

  if (allowed.has('buildCommand') && opts.buildCommand !== undefined) {
    const v = opts.buildCommand;
    if (typeof v !== 'string') errors.add('options.buildCommand', 'invalid_type', 'buildCommand must be a string.');
    // Its length limit is the create schema's (contract/create-site.ts), checked with these rules.
    else if (CONTROL.test(v))
      errors.add('options.buildCommand', 'invalid_characters', 'buildCommand must be one line without control characters.');
    else options.buildCommand = v;
  }
  if (allowed.has('enableCache') && opts.enableCache !== undefined) {
    if (typeof opts.enableCache !== 'boolean')
      errors.add('options.enableCache', 'invalid_type', 'enableCache must be a boolean.');
    else options.enableCache = opts.enableCache;
  }
  if (spec.id === 'directus') {
    const v = opts.directusReleaseType ?? 'minor';
    if (typeof v !== 'string' || !(DIRECTUS_RELEASE_TYPES as readonly string[]).includes(v)) {
      errors.add('options.directusReleaseType', 'invalid_value', 'directusReleaseType must be patch or minor.');
    } else options.directusReleaseType = v;
  }
  if (allowed.has('port') && opts.port !== undefined) {
    const v = opts.port;
    if (typeof v !== 'number' || !Number.isInteger(v)) errors.add('options.port', 'invalid_type', 'port must be an integer.');
    else if (v < 1024 || v > 65535) errors.add('options.port', 'out_of_range', 'port must be between 1024 and 65535.');
    else if (ctx.taken.ports.has(v)) errors.add('options.port', 'port_taken', 'Another site on the server uses this port.');
    else options.port = v;
  }
  for (const key of ['artifactPath', 'webDirectory'] as const) {
    if (allowed.has(key) && opts[key] !== undefined) {
      const path = checkRelativePath(errors, `options.${key}`, opts[key]);
      if (path !== undefined) options[key] = path;
    }
  }
  const secrets = spec.id === 'wordpress' ? checkWordPress(errors, opts, options) : {};
  return { options, secrets, typeVersion };
}

const KNOWN_OPTIONS = new Set([
  'buildCommand',
  'enableCache',
  'site_type_version',
  'directusReleaseType',
  'port',
  'artifactPath',
  'webDirectory',
  'performInstallSetup',
  'wpAdminSetup',
]);

function checkTypeVersion(
  errors: FieldErrors,
  body: Record<string, unknown>,
  opts: Record<string, unknown>,
  spec: SiteTypeSpec,
): number | undefined {
  const top = body.site_type_version;
  const inner = opts.site_type_version;
  if (spec.typeVersions.length === 0) {
    if (top !== undefined)
      errors.add('site_type_version', 'not_allowed_for_type', `${spec.displayName} has no site_type_version.`);
    return undefined;
  }
  if (top !== undefined && inner !== undefined && top !== inner) {
    errors.add('site_type_version', 'conflicting_values', 'site_type_version is given twice with different values.');
    return undefined;
  }
  const field = inner !== undefined ? 'options.site_type_version' : 'site_type_version';
  const value = inner ?? top;
  // The newest version is the default, as peers' panels preselect it.
  if (value === undefined) return spec.typeVersions[spec.typeVersions.length - 1];
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    errors.add(field, 'invalid_type', 'site_type_version must be an integer.');
    return undefined;
  }
  if (!spec.typeVersions.includes(value)) {
    errors.add(field, 'invalid_value', `${spec.displayName} supports site_type_version ${spec.typeVersions.join(', ')}.`);
    return undefined;
  }
  return value;
}

function checkRelativePath(errors: FieldErrors, field: string, value: unknown): string | undefined {
  if (typeof value !== 'string') {
    errors.add(field, 'invalid_type', 'must be a string.');
    return undefined;
  }
  if (value.startsWith('/')) {
    errors.add(field, 'invalid_format', 'must be relative to the site root (no leading /).');
    return undefined;
  }
  const clean = value.replace(/\/+$/, '');
  if (
    clean.length > 255 ||
    !/^[A-Za-z0-9._\-/]*$/.test(clean) ||
    clean.split('/').some((s) => s === '..' || (s === '' && clean !== ''))
  ) {
    errors.add(field, 'invalid_format', 'must be a path of letters, digits, . _ - and /, without "..".');
    return undefined;
  }
  return clean;
}

function checkWordPress(errors: FieldErrors, opts: Record<string, unknown>, options: Record<string, unknown>) {
  const perform = opts.performInstallSetup ?? true;
  if (typeof perform !== 'boolean') {
    errors.add('options.performInstallSetup', 'invalid_type', 'performInstallSetup must be a boolean.');
    return {};
  }
  options.performInstallSetup = perform;
  const setup = opts.wpAdminSetup;
  if (!perform) {
    if (setup !== undefined) {
      errors.add('options.wpAdminSetup', 'not_allowed', 'Remove wpAdminSetup when performInstallSetup is false.');
    }
    return {};
  }
  if (setup === undefined) {
    errors.add('options.wpAdminSetup', 'required', 'wpAdminSetup is required unless performInstallSetup is false.');
    return {};
  }
  if (!isPlainObject(setup)) {
    errors.add('options.wpAdminSetup', 'invalid_type', 'wpAdminSetup must be an object.');
    return {};
  }
  const fields: Record<string, (v: string) => string | undefined> = {
    title: (v) => (v.length >= 1 && v.length <= 200 && !CONTROL.test(v) ? undefined : '1-200 characters, one line'),
    adminUser: (v) => (/^[A-Za-z0-9_.@-]{1,60}$/.test(v) ? undefined : '1-60 letters, digits, _ . @ -'),
    adminPassword: (v) => (v.length >= 8 && v.length <= 200 && !CONTROL.test(v) ? undefined : '8-200 characters'),
    adminEmail: (v) => (/^[^\s@]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(v) ? undefined : 'an e-mail address'),
  };
  for (const key of Object.keys(setup)) {
    if (!(key in fields)) errors.add(`options.wpAdminSetup.${key}`, 'unknown_field', `"${key}" is not a field of wpAdminSetup.`);
  }
  const clean: Record<string, string> = {};
  for (const [key, check] of Object.entries(fields)) {
    const v = setup[key];
    const path = `options.wpAdminSetup.${key}`;
    if (v === undefined) errors.add(path, 'required', `${key} is required.`);
    else if (typeof v !== 'string') errors.add(path, 'invalid_type', `${key} must be a string.`);
    else {
      const problem = check(v);
      if (problem) errors.add(path, 'invalid_format', `${key} must be ${problem}.`);
      else clean[key] = v;
    }
  }
  const { adminPassword, ...visible } = clean;
  options.wpAdminSetup = visible;
  return adminPassword ? { wpAdminPassword: adminPassword } : {};
}
