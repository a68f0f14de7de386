import type { Step, StepContext } from '../../step.js';
import { mergeDotenv } from '../../templates/dotenv.js';
import { mustRun, StepError } from '../commands.js';
import { pathKind } from '../remote-files.js';
import { sitePort } from '../site-layout.js';
import { asOwner } from '../user-files.js';
import {
  allowInstallScripts,
  frameworkRelease,
  isComplete,
  isLive,
  makeLive,
  markInstalled,
  npm,
  readReleaseFile,
  runInRelease,
  typeVersion,
  writePrivate,
} from './framework-release.js';
import { chooseStrapiRelease } from './strapi-release.js';

/**
 * create-strapi-app's options per major: no prompts (stdin is empty), no start, npm, JavaScript,
 * SQLite scaffold; 5's without installing, which Siteplane does once package.json allows
 * better-sqlite3's build (allowInstallScripts). 4's installer has no such option.
 */
const CREATE_FLAGS: Record<number, string[]> = {
  4: ['--quickstart', '--no-run', '--use-npm'],
  5: ['--no-run', '--skip-cloud', '--use-npm', '--no-example', '--no-git-init', '--js', '--skip-db', '--no-install'],
};

/**
 * The scaffold's SQLite driver, a direct dependency of every Strapi project (and its default
 * database): a native module npm 12 would leave unbuilt.
 */
const NATIVE_MODULES = ['better-sqlite3'];

/**
 * Strapi <site_type_version> scaffolded by create-strapi-app from npm into releases/strapi, then
 * pointed at the site's PostgreSQL database through .env (the scaffold's config/database.js reads
 * DATABASE_*), its admin panel built. The scaffold is made with SQLite so that no password is ever
 * an argument; Strapi creates its tables in PostgreSQL on its first start under PM2.
 */
export function installStrapi(version: number): Step {
  return {
    name: `install Strapi ${version} from npm`,
    async run(ctx: StepContext) {
      const major = typeVersion(ctx.site, [3, 4, 5]);
      const flags = CREATE_FLAGS[major];
      if (!flags) {
        throw new StepError(
          `Strapi ${major} reached its end of life and its installer does not run on current Node.js; deploy a Strapi ${major} project to this site instead`,
        );
      }
      const release = frameworkRelease(ctx.site, 'strapi');
      if (!(await isComplete(ctx, release))) {
        // create-strapi-app refuses a non-empty directory: an interrupted scaffold starts over.
        // As the site user: root would follow a link the user put at releases/ (rm -rf resolves it).
        const owner = asOwner(release.layout.user);
        if ((await pathKind(ctx, release.dir, owner)) !== null) {
          await mustRun(ctx, ['rm', '-rf', '--', release.dir], owner, 'remove an unfinished Strapi install');
          ctx.log(`removed the unfinished ${release.dir}`);
        }
        const chosen = (await chooseStrapiRelease(ctx, major)) ?? String(major);
        await npm(
          ctx,
          release,
          ['exec', '--yes', '--', `create-strapi-app@${chosen}`, release.name, ...flags],
          `scaffold Strapi ${chosen}`,
          release.layout.releases,
        );
        ctx.log(`scaffolded Strapi ${chosen} with create-strapi-app`);
        await allowInstallScripts(ctx, release, NATIVE_MODULES);
        // The PostgreSQL driver in the same install: npm resolves the tree once.
        await npm(ctx, release, ['install', ...(ctx.site.database ? ['pg'] : [])], 'install the Strapi dependencies');
        ctx.log(`installed the Strapi dependencies${ctx.site.database ? ' and the PostgreSQL driver' : ''}`);
        await writePrivate(
          ctx,
          release,
          '.env',
          mergeDotenv((await readReleaseFile(ctx, release, '.env')) ?? '', strapiEnv(ctx)),
        );
        await runInRelease(ctx, release, ['npm', 'run', 'build'], 'build the Strapi admin panel', { NODE_ENV: 'production' });
        ctx.log('built the Strapi admin panel');
        await markInstalled(ctx, release);
      } else ctx.log('Strapi is installed');
      if (!(await isLive(ctx, release))) await makeLive(ctx, release);
    },
  };
}

function strapiEnv(ctx: StepContext): Record<string, string> {
  const base = { HOST: '127.0.0.1', PORT: String(sitePort(ctx.site)), NODE_ENV: 'production' };
  const db = ctx.site.database;
  if (!db) return base;
  if (!db.name) throw new StepError('the Strapi site has no database name');
  return {
    ...base,
    DATABASE_CLIENT: 'postgres',
    DATABASE_HOST: '127.0.0.1',
    DATABASE_PORT: '5432',
    DATABASE_NAME: db.name,
    DATABASE_USERNAME: db.user,
    DATABASE_PASSWORD: db.password,
    DATABASE_SSL: 'false',
  };
}

export const STRAPI_PROCESS = { script: 'node_modules/@strapi/strapi/bin/strapi.js', args: ['start'] };
