import type { ProvisionedSite, StepContext } from '../../step.js';
import { StepError } from '../commands.js';
import { claim } from '../ledger.js';
import { postgresScript } from './postgresql-client.js';
import {
  postgresDatabaseIdentifier,
  postgresDatabaseName,
  postgresRoleIdentifier,
  postgresRoleName,
  postgresString,
} from './postgresql-sql-quote.js';

type DatabasePlan = NonNullable<ProvisionedSite['database']>;

/**
 * Login role, then its database (owned by it, so it has every right there and, with CONNECT
 * revoked from PUBLIC, nobody else but superusers can connect). CREATE DATABASE has no IF NOT
 * EXISTS, so existence is read first — which is also what makes a second run change nothing.
 */
export async function ensurePostgresDatabaseAndUser(ctx: StepContext, plan: DatabasePlan): Promise<void> {
  const role = postgresRoleName(plan.user);
  if (!plan.createDatabase || !plan.name) throw new StepError('a PostgreSQL site needs a database name');
  const database = postgresDatabaseName(plan.name);
  const details = { engine: plan.engine, family: 'postgresql' };
  const rows = await postgresScript(
    ctx,
    `SELECT 'role', rolname FROM pg_roles WHERE rolname = ${postgresString(role)};\n` +
      `SELECT 'database', datname FROM pg_database WHERE datname = ${postgresString(database)};\n`,
    'read database state',
  );
  const roleExists = rows.some(([tag]) => tag === 'role');
  const databaseExists = rows.some(([tag]) => tag === 'database');

  const roleStatus = await claim(ctx, { kind: 'database_user', ref: role, details }, roleExists, 'PostgreSQL role');
  if (roleStatus === 'new') {
    if (plan.password === '') throw new StepError(`database user ${role} has no password`);
    await postgresScript(
      ctx,
      `CREATE ROLE ${postgresRoleIdentifier(role)} LOGIN PASSWORD ${postgresString(plan.password)};\n`,
      `create database user ${role}`,
    );
    ctx.log(`created PostgreSQL role ${role}`);
  } else ctx.log(`PostgreSQL role ${role} exists`);

  const databaseStatus = await claim(ctx, { kind: 'database', ref: database, details }, databaseExists, 'PostgreSQL database');
  if (databaseStatus === 'new') {
    const db = postgresDatabaseIdentifier(database);
    // CREATE DATABASE cannot run inside a transaction block, so these are separate statements.
    await postgresScript(
      ctx,
      `CREATE DATABASE ${db} OWNER ${postgresRoleIdentifier(role)};\nREVOKE ALL ON DATABASE ${db} FROM PUBLIC;\n`,
      `create database ${database}`,
    );
    ctx.log(`created PostgreSQL database ${database} owned by ${role}`);
  } else ctx.log(`PostgreSQL database ${database} exists`);
}
