import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, mustRunLong, run, StepError } from './commands.js';
import { fileHash, readFile, sha256, writeFile } from './remote-files.js';

/**
 * Debian packages. Every caller holds ctx.withServerLock('packages', …): apt and dpkg must not run
 * twice on one server. Package names come from this code, never from a request.
 */
const APT_ENV = { DEBIAN_FRONTEND: 'noninteractive' };
const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;

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

/** The version apt would install, or null when no configured repository offers the package. */
export async function aptCandidate(ctx: StepContext, name: string): Promise<string | null> {
  checkNames([name]);
  const result = await run(ctx, ['apt-cache', 'policy', '--', name], AS_ROOT);
  const candidate = /^\s*Candidate:\s*(\S+)/m.exec(result.stdout)?.[1];
  return result.code === 0 && candidate && candidate !== '(none)' ? candidate : null;
}

export async function aptUpdate(ctx: StepContext): Promise<void> {
  await mustRunLong(ctx, ['apt-get', 'update', '-q'], { ...AS_ROOT, env: APT_ENV }, 'apt-get update');
  ctx.log('refreshed the package lists');
}

export async function aptInstall(ctx: StepContext, names: readonly string[]): Promise<void> {
  checkNames(names);
  await mustRunLong(
    ctx,
    ['apt-get', 'install', '-y', '-q', '--no-install-recommends', '-o', 'Dpkg::Options::=--force-confold', ...names],
    { ...AS_ROOT, env: APT_ENV },
    `install ${names.join(' ')}`,
  );
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
  await writeFile(ctx, list, line, { owner: 'root', group: 'root', mode: '0644' });
  ctx.log(`added the apt repository ${source.uri} ${source.suite}`);
  await aptUpdate(ctx);
  return true;
}
