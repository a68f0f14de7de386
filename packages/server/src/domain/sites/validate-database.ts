import {
  type DatabaseFamily,
  DB_SERVERS,
  type DbEngine,
  type DbServer,
  dbEngineFamily,
  dbServerFamily,
  type SiteTypeSpec,
} from '@siteplane/contract';
import type { FieldErrors } from '../field-errors.js';
import { installedEngine } from '../servers/facts.js';
import type { CreateSiteContext } from './create-site-context.js';
import type { DatabasePlan } from './create-site-input.js';
import { SPEC_ENGINE_OFFER } from './engine-offer.js';

const DB_FIELDS = ['database', 'databaseUser', 'databasePassword', 'useCachingSha2Password', 'preferredDbServer'] as const;
const DB_NAME = /^[A-Za-z0-9_$]{1,63}$/;
const DB_USER = /^[A-Za-z0-9_]{1,32}$/;
const RESERVED_USERS = new Set(['root', 'postgres', 'mysql', 'mariadb.sys', 'debian-sys-maint', 'admin']);
const CONTROL = /[\x00-\x1f\x7f]/;

export interface DatabaseResult {
  plan: DatabasePlan | null;
  secrets: { databasePassword?: string };
}

/** Database rules: spec §2.2 (database fields), §2.5, §4.1 rules 1, 2 and 5, §8. */
export function validateDatabase(
  errors: FieldErrors,
  opts: Record<string, unknown>,
  spec: SiteTypeSpec,
  ctx: CreateSiteContext,
): DatabaseResult | undefined {
  if (spec.database === 'none') return { plan: null, secrets: {} };
  const want = opts.shouldCreateDatabaseAndUser;
  if (want !== undefined && typeof want !== 'boolean') {
    errors.add('options.shouldCreateDatabaseAndUser', 'invalid_type', 'shouldCreateDatabaseAndUser must be a boolean.');
    return undefined;
  }
  if (spec.database === 'optional' && want !== true) {
    // Rule 1: skipping the database means none of its fields are sent.
    for (const field of DB_FIELDS) {
      if (opts[field] !== undefined) {
        errors.add(
          `options.${field}`,
          'not_allowed_without_database',
          `${field} is sent only with shouldCreateDatabaseAndUser true; remove it to skip the database.`,
        );
      }
    }
    return { plan: null, secrets: {} };
  }
  if ((spec.database === 'always' || spec.database === 'user-only') && want === false) {
    errors.add(
      'options.shouldCreateDatabaseAndUser',
      'must_equal',
      spec.database === 'always'
        ? `${spec.displayName} always creates a database.`
        : `${spec.displayName} always creates a database user.`,
    );
  }

  const engine = resolveEngine(errors, opts.preferredDbServer, spec, ctx);
  const family = engine ? (dbEngineFamily(engine.engine) ?? undefined) : undefined;
  const createDatabase = spec.database !== 'user-only';

  let name: string | null = null;
  if (!createDatabase) {
    // Rule 2: phpMyAdmin never receives a database.
    if (opts.database !== undefined)
      errors.add('options.database', 'not_allowed', `${spec.displayName} creates no database; remove database.`);
  } else if (opts.database !== undefined) {
    if (typeof opts.database !== 'string') errors.add('options.database', 'invalid_type', 'database must be a string.');
    else if (!DB_NAME.test(opts.database))
      errors.add('options.database', 'invalid_format', 'database must be 1-63 letters, digits, _ or $.');
    else if (ctx.taken.databases.has(opts.database.toLowerCase()))
      errors.add('options.database', 'database_taken', 'A database of this name exists on the server.');
    else name = opts.database;
  }

  const user = checkUser(errors, opts.databaseUser, spec, family, ctx);
  let password: string | undefined;
  if (opts.databasePassword !== undefined) {
    const v = opts.databasePassword;
    if (typeof v !== 'string') errors.add('options.databasePassword', 'invalid_type', 'databasePassword must be a string.');
    else if (v.length < 8 || v.length > 128)
      errors.add('options.databasePassword', 'too_short', 'databasePassword must be 8-128 characters.');
    else if (CONTROL.test(v))
      errors.add('options.databasePassword', 'invalid_characters', 'databasePassword must not contain control characters.');
    else password = v;
  }
  let sha2 = false;
  if (opts.useCachingSha2Password !== undefined) {
    if (typeof opts.useCachingSha2Password !== 'boolean') {
      errors.add('options.useCachingSha2Password', 'invalid_type', 'useCachingSha2Password must be a boolean.');
    } else if (opts.useCachingSha2Password && family === 'postgresql') {
      errors.add('options.useCachingSha2Password', 'not_applicable', 'useCachingSha2Password applies to MySQL only.');
    } else sha2 = opts.useCachingSha2Password;
  }
  if (!engine) return undefined;
  return {
    plan: { createDatabase, name, user, engine: engine.engine, installEngine: engine.install, useCachingSha2Password: sha2 },
    secrets: password ? { databasePassword: password } : {},
  };
}

function checkUser(
  errors: FieldErrors,
  value: unknown,
  spec: SiteTypeSpec,
  family: DatabaseFamily | undefined,
  ctx: CreateSiteContext,
): string | null {
  const field = 'options.databaseUser';
  if (spec.id === 'phpmyadmin') {
    if (value !== undefined && value !== 'phpmyadmin')
      errors.add(field, 'must_equal', 'For phpMyAdmin databaseUser must be "phpmyadmin".');
    else if (ctx.taken.databaseUsers.has('phpmyadmin'))
      errors.add(field, 'database_user_taken', 'The user phpmyadmin exists on the server.');
    return 'phpmyadmin';
  }
  if (value === undefined) return null;
  if (typeof value !== 'string') errors.add(field, 'invalid_type', 'databaseUser must be a string.');
  else if (!DB_USER.test(value)) errors.add(field, 'invalid_format', 'databaseUser must be 1-32 letters, digits or _.');
  else if (family === 'postgresql' && /^pg_/i.test(value))
    errors.add(field, 'reserved_prefix', 'On PostgreSQL databaseUser must not start with pg_.');
  else if (RESERVED_USERS.has(value.toLowerCase())) errors.add(field, 'not_allowed', `"${value}" is reserved.`);
  else if (ctx.taken.databaseUsers.has(value.toLowerCase()))
    errors.add(field, 'database_user_taken', 'A database user of this name exists on the server.');
  else return value;
  return null;
}

/**
 * Rule 5: reuse an installed family; otherwise install the requested version, or the default of
 * the configured engine source (ctx.engines), which may refuse what it cannot install.
 */
function resolveEngine(
  errors: FieldErrors,
  preferred: unknown,
  spec: SiteTypeSpec,
  ctx: CreateSiteContext,
): { engine: DbEngine; install: boolean } | undefined {
  const facts = ctx.server?.facts;
  const offer = ctx.engines ?? SPEC_ENGINE_OFFER;
  if (preferred !== undefined) {
    if (typeof preferred !== 'string' || !(DB_SERVERS as readonly string[]).includes(preferred)) {
      errors.add('options.preferredDbServer', 'invalid_value', `preferredDbServer must be one of: ${DB_SERVERS.join(', ')}.`);
      return undefined;
    }
    const wanted = preferred as DbServer;
    const family = dbServerFamily(wanted);
    if (!spec.databaseFamilies.includes(family)) {
      errors.add(
        'options.preferredDbServer',
        'db_family_not_supported',
        `${spec.displayName} uses ${spec.databaseFamilies.join(' or ')} only.`,
      );
      return undefined;
    }
    if (!facts) return undefined;
    const installed = installedEngine(facts, family);
    if (installed && installed !== wanted) {
      errors.add(
        'options.preferredDbServer',
        'db_server_version_conflict',
        `The server has ${installed}; omit preferredDbServer to reuse it.`,
      );
      return undefined;
    }
    if (installed) return { engine: wanted, install: false };
    const refusal = offer.refusal(wanted, facts.os);
    if (refusal) {
      errors.add('options.preferredDbServer', 'db_engine_unavailable', refusal);
      return undefined;
    }
    return { engine: wanted, install: true };
  }
  if (!facts) return undefined;
  for (const family of spec.databaseFamilies) {
    const installed = installedEngine(facts, family);
    if (installed) return { engine: installed, install: false };
  }
  const choice = offer.defaultEngine(spec.databaseFamilies[0] as DatabaseFamily, facts.os);
  if ('refused' in choice) {
    // No field of the request chose the engine: the server (its OS) is what rules it out.
    errors.add('server', 'db_engine_unavailable', choice.refused);
    return undefined;
  }
  return { engine: choice.engine, install: true };
}
