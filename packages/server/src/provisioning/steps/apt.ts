import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, mustRunLong, run, StepCommandFailed, StepError } from './commands.js';
import { fileHash, readFile, sha256, writeFile } from './remote-files.js';

/**
 * Debian packages. Every caller holds ctx.withServerLock('packages', …): apt and dpkg must not run
 * twice on one server. Package names come from this code, never from a request.
 *
 * A managed server may never have fetched its package lists (debootstrap leaves them empty: every
 * package is "Unable to locate"), or fetched them long ago (the mirror has since replaced the
 * versions they name: the download fails with 404). So the lists are refreshed before apt reads
 * them when missing or older than LISTS_MAX_AGE_MIN, and an install that fails the way stale lists
 * make it fail is retried once after a refresh.
 */
const APT_ENV = { DEBIAN_FRONTEND: 'noninteractive' };
const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;

/**
 * Lists older than a day are refreshed. Debian's security archive and point releases replace
 * package versions, and the mirror drops the old files, within days; a day keeps a 404 rare while
 * a busy server does not pay for an `apt-get update` in every job.
 */
export const LISTS_MAX_AGE_MIN = 24 * 60;

/**
 * apt waits this long for the dpkg lock instead of failing at once: on a fresh server
 * unattended-upgrades or cloud-init often hold it for minutes after boot. Well below
 * LONG_TIMEOUT_MS, so a lock that never comes free fails the command with apt's own message (unless
 * an operator sets SITEPLANE_LONG_COMMAND_MINUTES under 10: then the command's limit ends it first).
 */
export const DPKG_LOCK_TIMEOUT_S = 600;
const LOCK_TIMEOUT = ['-o', `DPkg::Lock::Timeout=${DPKG_LOCK_TIMEOUT_S}`];

/**
 * When the lists were last refreshed. apt gives fetched list files the mirror's Last-Modified time,
 * not the time of the fetch, and leaves unchanged ones alone, so their age says little: a
 * successful refresh is stamped here (the file Debian's periodic apt job and other tools use too).
 */
export const UPDATE_STAMP = '/var/lib/apt/periodic/update-success-stamp';

/** What apt says when its lists do not name a package, or name a version the mirror no longer has. */
const STALE_LISTS = /Unable to locate package|has no installation candidate|\b404\s+Not Found/;

/** Contexts (jobs) that refreshed or checked the lists already: one probe per job is enough. */
const listsChecked = new WeakSet<StepContext>();

function checkNames(names: readonly string[]): void {
  for (const name of names) if (!PACKAGE_NAME.test(name)) throw new StepError(`invalid package name ${JSON.stringify(name)}`);
}

/** The subset of names that dpkg reports as installed ("ii"). */
export async function installedPackages(ctx: StepContext, names: readonly string[]): Promise<Set<string>> {
  checkNames(names);
  // Exit 1 when some name is unknown to dpkg; the known ones are still printed.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own ${field} format, not a JS template
  const result = await run(ctx, ['dpkg-query', '-W', '-f', '${Package}\\t${db:Status-Abbrev}\\n', '--', ...names], AS_ROOT);
  const installed = new Set<string>();
  for (const line of result.stdout.split('\n')) {
    const [name, status] = line.split('\t');
    if (name && status?.startsWith('ii')) installed.add(name);
  }
  return installed;
}

/**
 * The version apt would install, or null when no configured repository offers the package. The
 * lists are brought up to date first: on empty lists every package's candidate is "(none)".
 */
export async function aptCandidate(ctx: StepContext, name: string): Promise<string | null> {
  checkNames([name]);
  await ensureFreshLists(ctx);
  const result = await run(ctx, ['apt-cache', 'policy', '--', name], AS_ROOT);
  const candidate = /^\s*Candidate:\s*(\S+)/m.exec(result.stdout)?.[1];
  return result.code === 0 && candidate && candidate !== '(none)' ? candidate : null;
}

/** `find` prints `fresh NAME` or `stale NAME` for each list and the stamp, by the server's own clock. */
const LISTS_PROBE = [
  'find',
  '/var/lib/apt/lists',
  '/var/lib/apt/periodic',
  '-maxdepth',
  '1',
  '-type',
  'f',
  '(',
  '-name',
  '*_Packages*',
  '-o',
  '-name',
  'update-success-stamp',
  ')',
  '(',
  '-mmin',
  `-${LISTS_MAX_AGE_MIN}`,
  '-printf',
  'fresh %f\\n',
  '-o',
  '-printf',
  'stale %f\\n',
  ')',
];

/**
 * Refreshes the package lists when there are none, or when neither the stamp nor any list is
 * younger than LISTS_MAX_AGE_MIN. One probe; empty output (a dry run) counts as "no lists".
 */
export async function ensureFreshLists(ctx: StepContext): Promise<void> {
  if (listsChecked.has(ctx)) return;
  // Exit status ignored: find complains about a missing /var/lib/apt/periodic and goes on.
  const probe = await run(ctx, LISTS_PROBE, AS_ROOT);
  const lines = probe.stdout.split('\n').filter((line) => line !== '');
  const hasLists = lines.some((line) => line.includes('_Packages'));
  if (hasLists && lines.some((line) => line.startsWith('fresh '))) {
    listsChecked.add(ctx);
    return;
  }
  ctx.log(
    hasLists ? 'the package lists are older than a day: refreshing them' : 'the server has no package lists yet: fetching them',
  );
  await aptUpdate(ctx);
}

export async function aptUpdate(ctx: StepContext): Promise<void> {
  await mustRunLong(ctx, ['apt-get', 'update', '-q', ...LOCK_TIMEOUT], { ...AS_ROOT, env: APT_ENV }, 'apt-get update');
  // -D: a minimal system may have no /var/lib/apt/periodic yet (created 0755 under command.ts's umask).
  await mustRun(
    ctx,
    ['install', '-D', '-m', '0644', '-o', 'root', '-g', 'root', '/dev/null', UPDATE_STAMP],
    AS_ROOT,
    'stamp the refresh of the package lists',
  );
  listsChecked.add(ctx);
  ctx.log('refreshed the package lists');
}

export async function aptInstall(ctx: StepContext, names: readonly string[]): Promise<void> {
  checkNames(names);
  await ensureFreshLists(ctx);
  const argv = [
    'apt-get',
    'install',
    '-y',
    '-q',
    '--no-install-recommends',
    ...LOCK_TIMEOUT,
    '-o',
    'Dpkg::Options::=--force-confold',
    ...names,
  ];
  const options = { ...AS_ROOT, env: APT_ENV };
  const what = `install ${names.join(' ')}`;
  try {
    await mustRunLong(ctx, argv, options, what);
  } catch (error) {
    // Lists young by the clock can still be behind the mirror (a security update since), or the
    // stamp was left by a refresh that could not reach a repository.
    if (!(error instanceof StepCommandFailed) || !STALE_LISTS.test(`${error.result.stdout}\n${error.result.stderr}`)) throw error;
    ctx.log(`${what} failed as on outdated package lists; refreshing them and trying once more`);
    await aptUpdate(ctx);
    await mustRunLong(ctx, argv, options, what);
  }
  ctx.log(`installed ${names.join(' ')}`);
}

/** Installs those of names that are not installed yet; returns what it installed. */
export async function ensurePackages(ctx: StepContext, names: readonly string[]): Promise<string[]> {
  const installed = await installedPackages(ctx, names);
  const missing = names.filter((name) => !installed.has(name));
  if (missing.length > 0) await aptInstall(ctx, missing);
  return missing;
}

export interface OsRelease {
  id: string;
  codename: string;
}

const DEBIAN_CODENAMES: Record<string, string> = { '11': 'bullseye', '12': 'bookworm', '13': 'trixie' };

/**
 * The server's distribution from /etc/os-release; when that cannot be read (a dry-run server
 * answers nothing), from its recorded facts (`debian 12`).
 */
export async function osRelease(ctx: StepContext): Promise<OsRelease> {
  const text = (await readFile(ctx, '/etc/os-release')) ?? '';
  const field = (name: string) => new RegExp(`^${name}="?([A-Za-z0-9._-]+)"?$`, 'm').exec(text)?.[1] ?? '';
  if (field('ID') !== '') return { id: field('ID'), codename: field('VERSION_CODENAME') };
  const [id = '', version = ''] = (ctx.facts.os ?? '').toLowerCase().split(' ');
  return { id, codename: id === 'debian' ? (DEBIAN_CODENAMES[version] ?? '') : '' };
}

export interface AptSource {
  /** File name under /etc/apt/sources.list.d and /etc/apt/keyrings (no extension). */
  name: string;
  /** The repository's signing key, stored as downloaded: apt reads armoured `.asc` and binary `.gpg` keyrings alike, so no gpg is needed. */
  keyUrl: string;
  keyFormat: 'asc' | 'gpg';
  /** The `deb` line's URI, suite and components. */
  uri: string;
  suite: string;
  components: string;
}

/**
 * Adds a third-party apt repository (signing key + sources file) and refreshes the lists.
 * Returns false when it was there already.
 */
export async function ensureAptSource(ctx: StepContext, source: AptSource): Promise<boolean> {
  const keyring = `/etc/apt/keyrings/${source.name}.${source.keyFormat}`;
  const list = `/etc/apt/sources.list.d/${source.name}.list`;
  const line = `deb [signed-by=${keyring}] ${source.uri} ${source.suite} ${source.components}\n`;
  if ((await fileHash(ctx, list)) === sha256(line) && (await fileHash(ctx, keyring)) !== null) return false;
  await ensurePackages(ctx, ['ca-certificates', 'curl']);
  await mustRun(ctx, ['install', '-d', '-m', '0755', '/etc/apt/keyrings'], AS_ROOT, 'create /etc/apt/keyrings');
  await mustRunLong(
    ctx,
    ['curl', '-fsSL', '--proto', '=https', '-o', keyring, source.keyUrl],
    AS_ROOT,
    `download the signing key of ${source.name}`,
  );
  // apt verifies signatures as its unprivileged _apt user: the key must be world-readable, whatever
  // umask curl ran under.
  await mustRun(ctx, ['chmod', '0644', '--', keyring], AS_ROOT, `make the signing key of ${source.name} readable`);
  await writeFile(ctx, list, line, { owner: 'root', group: 'root', mode: '0644' });
  ctx.log(`added the apt repository ${source.uri} ${source.suite}`);
  await aptUpdate(ctx);
  return true;
}
