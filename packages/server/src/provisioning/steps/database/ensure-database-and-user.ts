import { dbServerFamily } from '@siteplane/contract';
import type { Step, StepContext } from '../../step.js';
import { StepError } from '../commands.js';
import { ensureMysqlDatabaseAndUser } from './mysql-database.js';
import { ensurePostgresDatabaseAndUser } from './postgresql-database.js';

/** The site's database and user (phpMyAdmin: the user only), on the engine of its plan. */
export function ensureDatabaseAndUser(): Step {
  return {
    name: 'ensure database and user',
    async run(ctx: StepContext) {
      const plan = ctx.site.database;
      if (!plan) throw new StepError(`site ${ctx.site.domain} has no database plan`);
      if (dbServerFamily(plan.engine) === 'mysql') await ensureMysqlDatabaseAndUser(ctx, plan);
      else await ensurePostgresDatabaseAndUser(ctx, plan);
    },
  };
}
