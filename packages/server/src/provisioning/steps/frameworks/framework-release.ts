import type { ProvisionedSite, StepContext } from '../../step.js';
import { mustRun, mustRunLong, StepError } from '../commands.js';
import { nativeBuildEnv, npmNodeGypVersion, npmRegistryArgs } from '../npm.js';
import { asSiteUser } from '../pm2.js';
import { linkTarget, pathKind, readFile } from '../remote-files.js';
import { numberOption, type SiteLayout, siteLayout } from '../site-layout.js';
import { asOwner, pointUserLink, writeUserFile } from '../user-files.js';

/**
 * A framework that is itself the application (Strapi, Directus, Soketi) is installed into its own
 * release, releases/<name>, which then becomes `current`. The install runs npm as the site user
 * with settings.npmRegistry. `marker` is a file only a finished install has, so a resumed job
 * redoes an interrupted install and a finished one is left alone. Everything below releases/ is
 * the site user's tree: every probe, write and link here runs as that user (user-files.ts).
 */
export interface FrameworkRelease {
  layout: SiteLayout;
  name: string;
  dir: string;
}

export function frameworkRelease(site: ProvisionedSite, name: string): FrameworkRelease {
  const layout = siteLayout(site);
  return { layout, name, dir: `${layout.releases}/${name}` };
}

export function typeVersion(site: ProvisionedSite, allowed: readonly number[]): number {
  const version = numberOption(site, 'site_type_version');
  if (version === undefined || !allowed.includes(version)) {
    throw new StepError(`${site.type} needs site_type_version ${allowed.join(', ')} (got ${String(version)})`);
  }
  return version;
}

/** True when the release is complete (it may still have to be made live). */
export async function isComplete(ctx: StepContext, release: FrameworkRelease): Promise<boolean> {
  return (await pathKind(ctx, `${release.dir}/${INSTALLED_MARKER}`, asOwner(release.layout.user))) !== null;
}

export async function isLive(ctx: StepContext, release: FrameworkRelease): Promise<boolean> {
  return (await linkTarget(ctx, release.layout.current, asOwner(release.layout.user))) === `releases/${release.name}`;
}

export async function ensureReleaseDirectory(ctx: StepContext, release: FrameworkRelease): Promise<void> {
  const owner = asOwner(release.layout.user);
  if ((await pathKind(ctx, release.dir, owner)) !== null) return;
  await mustRun(ctx, ['mkdir', '-p', '-m', '0755', '--', release.dir], owner, `create ${release.dir}`);
}

/**
 * npm as the site user in cwd; the registry options go before a `--` that ends npm's own options.
 * The environment points node-gyp at the server's Node headers (npm.ts: nativeBuildEnv).
 */
export async function npm(
  ctx: StepContext,
  release: FrameworkRelease,
  args: string[],
  what: string,
  cwd = release.dir,
): Promise<void> {
  const options = ['--no-audit', '--no-fund', ...npmRegistryArgs(ctx)];
  const end = args.indexOf('--');
  const argv = end === -1 ? [...args, ...options] : [...args.slice(0, end), ...options, ...args.slice(end)];
  const user = asSiteUser(release.layout, cwd);
  await mustRunLong(ctx, ['npm', ...argv], { ...user, env: { ...user.env, ...(await nativeBuildEnv(ctx)) } }, what);
}

/**
 * Lets these dependencies run their install scripts, recorded in the project's package.json
 * (`allowScripts`). npm 12 skips every dependency's install script not listed there, with only a
 * warning, so a native module (isolated-vm, better-sqlite3) would be left unbuilt and fail when
 * loaded; older npm ignores the field and runs them all. Only the modules the framework loads are
 * listed: the others' scripts (banners, optional checks) stay off. `npm pkg set` edits the file as
 * the site user. True when package.json did not allow them all yet (it changed).
 */
export async function allowInstallScripts(
  ctx: StepContext,
  release: FrameworkRelease,
  names: readonly string[],
): Promise<boolean> {
  for (const name of names) {
    if (!/^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9_-]*$/.test(name)) throw new StepError(`invalid package name ${name}`);
  }
  const allowed = packageObject(await readReleaseFile(ctx, release, 'package.json'), 'allowScripts');
  if (names.every((name) => allowed[name] === true)) return false;
  const settings = names.map((name) => `allowScripts.${name}=true`);
  const user = asSiteUser(release.layout, release.dir);
  await mustRun(ctx, ['npm', 'pkg', 'set', '--json', ...settings], user, 'allow install scripts');
  ctx.log(`npm may run the install scripts of ${names.join(', ')} (allowScripts in package.json)`);
  return true;
}

/**
 * Makes the project's node-gyp the one that comes with the server's npm (`overrides` in
 * package.json). When npm runs an install script it puts every node_modules/.bin ahead of its own
 * node-gyp, so a node-gyp some dependency brings builds the native modules instead: Directus's
 * sqlite3 5 wants node-gyp 8.x, which npm places at the project's top. node-gyp before 10 imports
 * distutils, gone since Python 3.12, so on Debian 13 (Python 3.13) isolated-vm does not build.
 * npm's own node-gyp was released with it, for the Node and Python of its time. Setting
 * npm_config_node_gyp would not do: only npm's fallback, behind those .bin directories, reads it.
 * Nothing changes when npm names no node-gyp (a dry run). True when package.json changed.
 */
export async function useNpmNodeGyp(ctx: StepContext, release: FrameworkRelease): Promise<boolean> {
  const version = await npmNodeGypVersion(ctx);
  if (version === null) {
    ctx.log("npm names no node-gyp of its own; the project's dependencies decide which one builds");
    return false;
  }
  const overrides = packageObject(await readReleaseFile(ctx, release, 'package.json'), 'overrides');
  if (overrides['node-gyp'] === version) return false;
  const user = asSiteUser(release.layout, release.dir);
  await mustRun(ctx, ['npm', 'pkg', 'set', '--json', `overrides.node-gyp=${JSON.stringify(version)}`], user, 'pin node-gyp');
  ctx.log(`native modules build with node-gyp ${version}, npm's own (overrides in package.json)`);
  return true;
}

/** An object-valued field of a package.json, or {} when it is missing or not an object. */
function packageObject(packageJson: string | null, field: string): Record<string, unknown> {
  try {
    const value = (JSON.parse(packageJson ?? '{}') as Record<string, unknown>)[field];
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A command in the release directory as the site user (long: builds, bootstraps). */
export async function runInRelease(
  ctx: StepContext,
  release: FrameworkRelease,
  argv: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<void> {
  const options = asSiteUser(release.layout, release.dir);
  await mustRunLong(ctx, argv, { ...options, env: { ...options.env, ...env } }, what);
}

/** Written last by every framework install: its presence means the release is complete. */
export const INSTALLED_MARKER = '.siteplane-installed';

export async function markInstalled(ctx: StepContext, release: FrameworkRelease): Promise<void> {
  const path = `${release.dir}/${INSTALLED_MARKER}`;
  await writeUserFile(ctx, { user: release.layout.user, path, content: `${new Date().toISOString()}\n`, mode: '0644' });
}

/**
 * Writes a file into the release as the site user, readable by that user only (it may hold
 * secrets): never readable by others, not even before its mode is set, and a link planted at its
 * name is replaced, not written through (user-files.ts).
 */
export async function writePrivate(ctx: StepContext, release: FrameworkRelease, name: string, content: string): Promise<void> {
  await writeUserFile(ctx, { user: release.layout.user, path: `${release.dir}/${name}`, content, mode: '0600' });
}

/** Read as the site user: the release is the user's tree, and root would follow a link placed there. */
export async function readReleaseFile(ctx: StepContext, release: FrameworkRelease, name: string): Promise<string | null> {
  return readFile(ctx, `${release.dir}/${name}`, asSiteUser(release.layout, release.dir));
}

export async function makeLive(ctx: StepContext, release: FrameworkRelease): Promise<void> {
  await pointUserLink(ctx, release.layout.user, release.layout.current, `releases/${release.name}`);
  ctx.log(`${release.layout.current} now points to releases/${release.name}`);
}
