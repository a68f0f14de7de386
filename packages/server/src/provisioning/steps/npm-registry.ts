import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, mustRunLong, run, StepError } from './commands.js';
import { npmRegistryUrl } from './npm.js';
import { compareVersions, parseVersion } from './semver.js';

/**
 * Packages read straight from the npm registry (settings.npmRegistry or npm's own), for what must
 * exist before npm does: Node's binaries and npm itself (node-from-npm.ts).
 *
 * The server fetches the metadata with curl and the control plane reads it. The server, not the
 * control plane, is what must reach the registry (NPM_REGISTRY may be a mirror only the servers'
 * network sees), so asking from there checks the path the download takes; and keeping the choice
 * of version here keeps it a pure, tested function instead of a script on the server.
 */
export interface RegistryRelease {
  name: string;
  version: string;
  tarball: string;
  /** dist.integrity's sha512, in hex as sha512sum prints it. */
  sha512: string;
  /** engines.node as published, when it is. */
  enginesNode: string | undefined;
}

/** The registry's abbreviated metadata: versions with their dist and engines only. */
export interface Packument {
  name?: string;
  versions?: Record<string, { dist?: { tarball?: unknown; integrity?: unknown }; engines?: { node?: unknown } }>;
}

const PACKAGE_NAME = /^[a-z0-9][a-z0-9._-]*$/;
const CURL = ['curl', '-fsSL', '--proto', '=http,https', '--proto-redir', '=http,https', '--retry', '2'];

/** The package's metadata; null on a dry-run server, which answers nothing. */
export async function fetchPackument(ctx: StepContext, name: string): Promise<Packument | null> {
  if (!PACKAGE_NAME.test(name)) throw new StepError(`invalid npm package name ${JSON.stringify(name)}`);
  const url = `${npmRegistryUrl(ctx)}${name}`;
  const result = await run(ctx, [...CURL, '-H', 'Accept: application/vnd.npm.install-v1+json', url], AS_ROOT);
  if (result.code !== 0) {
    throw new StepError(`could not read ${url} from the server: ${result.stderr.trim() || `curl exited with ${result.code}`}`);
  }
  if (result.stdout === '' && ctx.exec.kind === 'dry-run') return null;
  try {
    return JSON.parse(result.stdout) as Packument;
  } catch {
    throw new StepError(`${url} did not answer with npm package metadata: ${JSON.stringify(result.stdout.slice(0, 200))}`);
  }
}

const SCOPED_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/**
 * One release's manifest (`<registry><name>/<version>`, a few kilobytes where the packument of a
 * package with hundreds of releases is megabytes), or null when the registry does not have that
 * release (404). Scoped names are allowed; the `/` is encoded as the registry expects.
 */
export async function fetchVersionManifest(
  ctx: StepContext,
  name: string,
  version: string,
): Promise<{ dependencies?: Record<string, unknown> } | null> {
  if (!SCOPED_NAME.test(name) || !parseVersion(version)) {
    throw new StepError(`invalid npm package ${JSON.stringify(`${name}@${version}`)}`);
  }
  const url = `${npmRegistryUrl(ctx)}${name.replace('/', '%2f')}/${version}`;
  const result = await run(ctx, [...CURL, url], AS_ROOT);
  if (result.code === 22 && /\b404\b/.test(result.stderr)) return null;
  if (result.code !== 0) {
    throw new StepError(`could not read ${url} from the server: ${result.stderr.trim() || `curl exited with ${result.code}`}`);
  }
  try {
    return JSON.parse(result.stdout) as { dependencies?: Record<string, unknown> };
  } catch {
    throw new StepError(`${url} did not answer with an npm manifest: ${JSON.stringify(result.stdout.slice(0, 200))}`);
  }
}

/** The newest stable version that `accept` takes, with a usable tarball and sha512 integrity; null when none. */
export function newestRelease(
  packument: Packument,
  name: string,
  accept: (version: string, enginesNode: string | undefined) => boolean,
): RegistryRelease | null {
  const candidates: RegistryRelease[] = [];
  for (const [version, manifest] of Object.entries(packument.versions ?? {})) {
    const enginesNode = typeof manifest.engines?.node === 'string' ? manifest.engines.node : undefined;
    if (!parseVersion(version) || !accept(version, enginesNode)) continue;
    const tarball = manifest.dist?.tarball;
    const sha512 = sha512Hex(manifest.dist?.integrity);
    if (typeof tarball !== 'string' || !/^https?:\/\/[^\s]+$/.test(tarball) || !sha512) continue;
    candidates.push({ name, version, tarball, sha512, enginesNode });
  }
  candidates.sort((a, b) => compareVersions(parseVersion(b.version)!, parseVersion(a.version)!));
  return candidates[0] ?? null;
}

/** The sha512 of an SRI string (`sha512-<base64>`, maybe among others), as hex; null without one. */
export function sha512Hex(integrity: unknown): string | null {
  if (typeof integrity !== 'string') return null;
  for (const entry of integrity.trim().split(/\s+/)) {
    const base64 = /^sha512-([A-Za-z0-9+/]+={0,2})$/.exec(entry)?.[1];
    const bytes = base64 ? Buffer.from(base64, 'base64') : null;
    if (bytes?.length === 64) return bytes.toString('hex');
  }
  return null;
}

/**
 * Downloads the release's tarball into dir (a root-owned directory no other user can write) and
 * checks it against the registry's sha512 before anyone unpacks it. Returns the file's path.
 */
export async function downloadVerified(ctx: StepContext, release: RegistryRelease, dir: string): Promise<string> {
  const file = `${dir}/${release.name}-${release.version}.tgz`;
  await mustRunLong(ctx, [...CURL, '-o', file, release.tarball], AS_ROOT, `download ${release.name}@${release.version}`);
  const result = await run(ctx, ['sha512sum', '--', file], AS_ROOT);
  const actual = /^([0-9a-f]{128})\s/.exec(result.stdout)?.[1] ?? null;
  if (result.code !== 0 || actual !== release.sha512) {
    await mustRun(ctx, ['rm', '-f', '--', file], AS_ROOT, `remove ${file}`);
    throw new StepError(
      `${release.tarball} does not match the registry's integrity for ${release.name}@${release.version} (sha512 ${actual ?? 'unreadable'}); it was not unpacked`,
    );
  }
  ctx.log(`downloaded ${release.name}@${release.version} and checked its sha512`);
  return file;
}
