import type { Step, StepContext } from '../../step.js';
import { randomSecret } from '../../templates/random-secret.js';
import { mustRun, StepError } from '../commands.js';
import { asSiteUser } from '../pm2.js';
import { modeOf, probe } from '../probe.js';
import { sitePort, stringOption } from '../site-layout.js';
import {
  allowInstallScripts,
  ensureReleaseDirectory,
  type FrameworkRelease,
  frameworkRelease,
  isComplete,
  isLive,
  makeLive,
  markInstalled,
  npm,
  readReleaseFile,
  runInRelease,
  typeVersion,
  useNpmNodeGyp,
  writePrivate,
} from './framework-release.js';

/** Directus reads its configuration from this JSON file (CONFIG_PATH): every value exact, no .env quoting. */
export const DIRECTUS_CONFIG = 'directus.config.json';

/**
 * Directus <site_type_version> from npm into releases/directus, bootstrapped against the site's
 * PostgreSQL database (SQLite in shared/ when the site has none). directusReleaseType decides
 * which updates `npm update` may take: patch → ~x.y.z, minor → ^x.y.z. The first admin is
 * admin@<domain> (adminEmail) with a generated password kept in the config file for the owner to read.
 */
export function installDirectus(version: number): Step {
  return {
    name: `install Directus ${version} from npm`,
    async run(ctx: StepContext) {
      const major = typeVersion(ctx.site, [10, 11]);
      const release = frameworkRelease(ctx.site, 'directus');
      if (!(await isComplete(ctx, release))) {
        await ensureReleaseDirectory(ctx, release);
        if ((await readReleaseFile(ctx, release, 'package.json')) === null) {
          await writePrivate(
            ctx,
            release,
            'package.json',
            `${JSON.stringify({ name: 'directus-site', private: true }, null, 2)}\n`,
          );
        }
        const allowed = await allowInstallScripts(ctx, release, nativeModules(ctx));
        const pinned = await useNpmNodeGyp(ctx, release);
        if (allowed || pinned) {
          // An install made before left them unbuilt (npm 12 blocked them, or node-gyp 8 failed on
          // Python 3.12+), and npm does not build an installed package again: node_modules starts over.
          const modules = `${release.dir}/node_modules`;
          await mustRun(ctx, ['rm', '-rf', '--', modules], asSiteUser(release.layout, release.dir), `remove ${modules}`);
        }
        const prefix = stringOption(ctx.site, 'directusReleaseType') === 'patch' ? '~' : '^';
        await npm(ctx, release, ['install', `--save-prefix=${prefix}`, `directus@${major}`], `install directus@${major}`);
        ctx.log(`installed directus@${major} from npm (updates: ${prefix === '~' ? 'patch' : 'minor'})`);
        if ((await readReleaseFile(ctx, release, DIRECTUS_CONFIG)) === null) {
          await writePrivate(ctx, release, DIRECTUS_CONFIG, `${JSON.stringify(directusConfig(ctx, release), null, 2)}\n`);
        }
        await runInRelease(ctx, release, ['node', 'node_modules/directus/cli.js', 'bootstrap'], 'bootstrap Directus', {
          CONFIG_PATH: `${release.dir}/${DIRECTUS_CONFIG}`,
        });
        ctx.log('bootstrapped Directus (schema, first admin)');
        await markInstalled(ctx, release);
      } else ctx.log('Directus is installed');
      if (!ctx.site.database) await keepSqlitePrivate(ctx, release);
      if (!(await isLive(ctx, release))) await makeLive(ctx, release);
    },
  };
}

function sqliteFile(release: FrameworkRelease): string {
  return `${release.layout.shared}/directus.db`;
}

/**
 * The SQLite database (a site without PostgreSQL) holds every user, token and item: only its user
 * reads it. Directus's bootstrap creates it under umask 022 (0644); its user narrows it — on every
 * run, so a site installed before this gets it too. SQLite gives its journal files the database's
 * mode.
 */
async function keepSqlitePrivate(ctx: StepContext, release: FrameworkRelease): Promise<void> {
  const path = sqliteFile(release);
  const asOwner = asSiteUser(release.layout, release.dir);
  const [mode] = await probe(ctx, [modeOf(path)], asOwner);
  if (mode === null || mode === '600') return;
  await mustRun(ctx, ['chmod', '0600', '--', path], asOwner, `restrict ${path}`);
  ctx.log(`restricted ${path} to its owner (mode 600)`);
}

/**
 * The native modules Directus loads: isolated-vm (its sandbox for flows, loaded at every start) and,
 * for a site on SQLite, sqlite3 (an optional dependency the PostgreSQL sites never load).
 */
function nativeModules(ctx: StepContext): string[] {
  return ['isolated-vm', ...(ctx.site.database ? [] : ['sqlite3'])];
}

function directusConfig(ctx: StepContext, release: FrameworkRelease): Record<string, string | number> {
  const { site } = ctx;
  const scheme = site.ssl.enabled ? 'https' : 'http';
  const base = {
    HOST: '127.0.0.1',
    PORT: sitePort(site),
    PUBLIC_URL: `${scheme}://${site.domain}`,
    KEY: randomSecret(32),
    SECRET: randomSecret(48),
    ADMIN_EMAIL: adminEmail(site.domain),
    ADMIN_PASSWORD: randomSecret(24),
  };
  const db = site.database;
  if (!db) return { ...base, DB_CLIENT: 'sqlite3', DB_FILENAME: sqliteFile(release) };
  if (!db.name) throw new StepError('the Directus site has no database name');
  // "string:" stops Directus from guessing a type (a password of digits would become a number).
  return {
    ...base,
    DB_CLIENT: 'pg',
    DB_HOST: '127.0.0.1',
    DB_PORT: 5432,
    DB_DATABASE: `string:${db.name}`,
    DB_USER: `string:${db.user}`,
    DB_PASSWORD: `string:${db.password}`,
  };
}

/**
 * Special-use top-level names (RFC 2606, 6761, 6762, 9476, and .internal), outside IANA's root
 * zone: Directus checks the admin's address against IANA's list of top-level domains (Joi's
 * email()) and refuses the first admin of a site named under one of them, so its bootstrap fails.
 */
const SPECIAL_USE_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local', 'internal', 'alt']);

/** admin@<domain>, or admin@example.com for a domain Directus would not accept in an address. */
export function adminEmail(domain: string): string {
  const tld = domain.slice(domain.lastIndexOf('.') + 1).toLowerCase();
  return SPECIAL_USE_TLDS.has(tld) ? 'admin@example.com' : `admin@${domain}`;
}

/** How PM2 runs Directus; the config path goes through `current`, so it follows deployments. */
export function directusProcess(currentDir: string) {
  return { script: 'node_modules/directus/cli.js', args: ['start'], env: { CONFIG_PATH: `${currentDir}/${DIRECTUS_CONFIG}` } };
}
