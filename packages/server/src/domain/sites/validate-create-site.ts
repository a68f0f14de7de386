import {
  CREATE_SITE_BODIES,
  type FieldError,
  normaliseSiteType,
  SITE_TYPE_IDS,
  SITE_TYPES,
  type SiteTypeId,
} from '@siteplane/contract';
import { FieldErrors, isPlainObject, UUID_RE, ValidationError } from '../field-errors.js';
import { normaliseHostname } from '../hostnames.js';
import { schemaErrors } from '../schema-errors.js';
import type { CreateSiteContext } from './create-site-context.js';
import type { SitePlan } from './create-site-input.js';
import { validateDatabase } from './validate-database.js';
import { validateDomainAndSsl } from './validate-domain-and-ssl.js';
import { planRuntime } from './validate-runtime.js';
import { validateTypeOptions } from './validate-type-options.js';

const TOP_LEVEL = new Set([
  'server',
  'serverUser',
  'type',
  'domain',
  'freeDomain',
  'ssl',
  'sslEmail',
  'sslProvider',
  'supportsLivewire',
  'wildcard',
  'dnsProfile',
  'includeWwwSslCert',
  'options',
  'site_type_version',
]);

/** The names a body asks for, normalised as the rules will see them, to look up whether they are taken. */
export function requestedNames(body: unknown): { domain?: string; database?: string; databaseUser?: string } {
  if (!isPlainObject(body)) return {};
  const opts = isPlainObject(body.options) ? body.options : {};
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const domain = str(body.domain);
  return {
    domain: domain === undefined ? undefined : normaliseHostname(domain),
    database: str(opts.database),
    databaseUser: str(opts.databaseUser),
  };
}

/** The server and user UUIDs of a body, when well-formed: what the use case must load first. */
export function referencedIds(body: unknown): { server?: string; serverUser?: string; dnsProfile?: string } {
  if (!isPlainObject(body)) return {};
  const pick = (v: unknown) => (typeof v === 'string' && UUID_RE.test(v) ? v.toLowerCase() : undefined);
  const dns = isPlainObject(body.dnsProfile) ? pick(body.dnsProfile.uuid) : undefined;
  return { server: pick(body.server), serverUser: pick(body.serverUser), dnsProfile: dns };
}

/**
 * Every create rule of spec §2.1–2.5, §4.1 (rules 1–5) and §8 as one pure function.
 * All violations are collected; the plan is returned only when there are none.
 */
export function validateCreateSite(body: unknown, ctx: CreateSiteContext): SitePlan {
  const errors = new FieldErrors();
  if (!isPlainObject(body)) {
    throw new ValidationError([{ field: '', code: 'invalid_type', message: 'The body must be a JSON object.' }]);
  }
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) errors.add(key, 'unknown_field', `"${key}" is not a field of a site.`);
  }

  const server = checkUuid(errors, body, 'server');
  const serverUser = checkUuid(errors, body, 'serverUser');
  if (server && !ctx.server) errors.add('server', 'not_found', 'No such server.');
  if (server && ctx.server && serverUser && !ctx.serverUserExists) {
    errors.add('serverUser', 'not_found', 'No such user on this server.');
  }

  const typeId = checkType(errors, body.type);
  const options = body.options;
  if (options === undefined) errors.add('options', 'required', 'options is required (an object, possibly empty).');
  else if (!isPlainObject(options)) errors.add('options', 'invalid_type', 'options must be an object.');
  const opts = isPlainObject(options) ? options : {};

  if (body.supportsLivewire !== undefined) {
    if (typeof body.supportsLivewire !== 'boolean') errors.add('supportsLivewire', 'invalid_type', 'must be a boolean');
    else if (typeId && typeId !== 'laravel')
      errors.add('supportsLivewire', 'not_allowed_for_type', 'supportsLivewire applies to the laravel type only.');
  }

  const spec = typeId ? SITE_TYPES[typeId] : undefined;
  const domainAndSsl = validateDomainAndSsl(errors, body, spec, ctx);
  const typeOptions = spec ? validateTypeOptions(errors, body, opts, spec, ctx) : undefined;
  const database = spec ? validateDatabase(errors, opts, spec, ctx) : undefined;
  const runtime = spec && typeOptions ? planRuntime(errors, opts, spec, typeOptions.typeVersion, ctx) : {};
  if (spec) addSchemaErrors(errors, body, spec.id);

  if (!errors.empty || !spec || !server || !serverUser || !typeOptions || database === undefined) {
    throw new ValidationError(errors.list);
  }
  return {
    server,
    serverUser,
    type: spec.id,
    freeDomain: domainAndSsl.freeDomain,
    domain: domainAndSsl.domain,
    ssl: domainAndSsl.ssl,
    supportsLivewire: body.supportsLivewire === true,
    options: { ...typeOptions.options, ...runtimeOptions(runtime) },
    secrets: { ...typeOptions.secrets, ...database.secrets },
    database: database.plan,
    runtime,
  };
}

/**
 * The type's create schema (contract/create-site.ts) is checked too, so each limit it states is
 * enforced even where no rule above repeats it. A field the rules above already reported keeps
 * their more precise error; the schema adds only what they did not see.
 */
function addSchemaErrors(errors: FieldErrors, body: Record<string, unknown>, type: SiteTypeId): void {
  const reported = errors.list.map((e) => e.field);
  const overlaps = (field: string) =>
    reported.some((r) => r === field || r.startsWith(`${field}.`) || field.startsWith(`${r}.`) || r === '');
  // The type as the schema names it: a display name ("Static HTML") was accepted above.
  // Fields at the top and among the options were judged above, known or not, allowed for the
  // type or not (a dnsProfile beside a refused wildcard is that one error, not two).
  const judged = (e: FieldError) => e.code === 'unknown_field' && /^(options\.)?[^.]+$/.test(e.field);
  for (const e of schemaErrors(CREATE_SITE_BODIES[type], { ...body, type }, 100)) {
    if (!overlaps(e.field) && !judged(e)) errors.add(e.field, e.code, e.message);
  }
}

function runtimeOptions(runtime: SitePlan['runtime']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (runtime.php) out.phpVersion = runtime.php.version;
  if (runtime.node) out.nodejsVersion = runtime.node.version;
  return out;
}

function checkUuid(errors: FieldErrors, body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    errors.add(field, 'required', `${field} is required.`);
    return undefined;
  }
  if (typeof value !== 'string' || !UUID_RE.test(value)) {
    errors.add(field, 'invalid_format', `${field} must be a UUID.`);
    return undefined;
  }
  return value.toLowerCase();
}

function checkType(errors: FieldErrors, value: unknown) {
  if (value === undefined || value === null) {
    errors.add('type', 'required', 'type is required.');
    return undefined;
  }
  if (typeof value !== 'string') {
    errors.add('type', 'invalid_type', 'type must be a string.');
    return undefined;
  }
  const id = normaliseSiteType(value);
  if (!id) errors.add('type', 'invalid_value', `Unknown type; one of: ${SITE_TYPE_IDS.join(', ')}.`);
  return id;
}
