import type { DbEngine } from '@siteplane/contract';
import type { Step, StepContext } from '../../step.js';
import { aptCandidate, aptInstall, ensureAptSource, installedPackages, osRelease } from '../apt.js';
import { StepError } from '../commands.js';
import { startService } from '../services.js';
import { type EngineSource, engineSource } from './engines.js';
import { mysqlResponds } from './mysql-client.js';
import { postgresResponds } from './postgresql-client.js';

/**
 * The database engine of the site's plan (spec §4.1 rule 5): installEngine true installs it
 * (vendor repository where Debian has not got that version), false reuses the installed one.
 * Which engine is already decided at create time, by DB_ENGINE_SOURCE among others: with
 * `distribution` the plan names only engines the server's distribution ships, which this step
 * then takes from Debian's own archive (engines.ts: distroVersion).
 * Either way it ends up answering queries: a stopped engine is started. Engines are server-wide
 * and never in a site's ledger; removing a site never uninstalls one.
 */
export function ensureDatabaseEngine(): Step {
  return {
    name: 'ensure database engine',
    async run(ctx: StepContext) {
      const plan = ctx.site.database;
      if (!plan) throw new StepError(`site ${ctx.site.domain} has no database plan`);
      const source = engineSource(plan.engine);
      const installed = await ctx.withServerLock('packages', async () => {
        const present = await installedPackages(ctx, source.packages);
        if (source.packages.every((name) => present.has(name))) return false;
        if (!plan.installEngine) {
          ctx.log(`${plan.engine} was expected on the server but is not installed; installing it`);
        }
        await installEngine(ctx, source);
        return true;
      });
      if (!installed) ctx.log(`${plan.engine} is installed`);
      // The init scripts wait until the server accepts connections; if it still does not, the
      // database step's client reports why. Under a lock: two creates that both found the engine
      // stopped both started it, and the second start failed ("another postmaster is running").
      await ctx.withServerLock(`service:${source.unit}`, async () => {
        if (!(await responds(ctx, source))) await startService(ctx, source.unit, source.initScript);
      });
      if (installed) await ctx.updateFacts(engineFacts(plan.engine, source));
    },
  };
}

function responds(ctx: StepContext, source: EngineSource): Promise<boolean> {
  return source.family === 'mysql' ? mysqlResponds(ctx) : postgresResponds(ctx);
}

function engineFacts(engine: DbEngine, source: EngineSource): { mysql: DbEngine } | { postgresql: DbEngine } {
  return source.family === 'mysql' ? { mysql: engine } : { postgresql: engine };
}

async function installEngine(ctx: StepContext, source: EngineSource): Promise<void> {
  if (source.unavailable) throw new StepError(source.unavailable);
  const candidate = await aptCandidate(ctx, source.distroPackage);
  const fromDistro = candidate !== null && source.distroVersion?.test(candidate) === true;
  if (!fromDistro) {
    if (!source.repository) throw new StepError(`${source.engine} has no package source for this server`);
    const os = await osRelease(ctx);
    if (os.id !== 'debian' || os.codename === '') {
      throw new StepError(`${source.engine} needs its vendor's apt repository, which Siteplane adds on Debian only`);
    }
    await ensureAptSource(ctx, source.repository(os.codename));
  }
  await aptInstall(ctx, source.packages);
}
