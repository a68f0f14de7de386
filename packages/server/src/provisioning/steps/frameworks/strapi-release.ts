import type { StepContext } from '../../step.js';
import { StepError } from '../commands.js';
import { fetchPackument, fetchVersionManifest } from '../npm-registry.js';
import { compareVersions, parseVersion } from '../semver.js';

/**
 * Which create-strapi-app <major>.x to run. Strapi releases its packages in lockstep: the scaffold
 * of create-strapi-app X pins @strapi/strapi, @strapi/plugin-users-permissions and
 * @strapi/plugin-cloud to X, and each of them pins its @strapi/* dependencies to X. A registry can
 * hold X of some of them and not others — a mirror that has not synced a release completely, or the
 * public registry minutes after a publish — and then `npm install` fails with ETARGET for the
 * scaffold whatever is retried. So the newest X whose whole lockstep set the server's registry
 * serves is chosen, asking for each release's small manifest, never for npm's megabyte packuments.
 */
function roots(major: number): string[] {
  // Strapi 4's scaffold has the cloud plugin only from 4.15 on; 5's always.
  return ['@strapi/strapi', '@strapi/plugin-users-permissions', ...(major >= 5 ? ['@strapi/plugin-cloud'] : [])];
}

/** Releases looked at, newest first, before giving up (each costs a few small requests). */
const CANDIDATES = 5;

/** The version to run, or null on a dry-run server (which answers nothing). */
export async function chooseStrapiRelease(ctx: StepContext, major: number): Promise<string | null> {
  const packument = await fetchPackument(ctx, 'create-strapi-app');
  if (packument === null) return null;
  const versions = Object.keys(packument.versions ?? {})
    .filter((version) => parseVersion(version)?.[0] === major)
    .sort((a, b) => compareVersions(parseVersion(b)!, parseVersion(a)!))
    .slice(0, CANDIDATES);
  if (versions.length === 0) throw new StepError(`the npm registry has no create-strapi-app ${major}.x`);
  const incomplete: string[] = [];
  for (const version of versions) {
    const missing = await firstMissing(ctx, version, roots(major));
    if (missing === null) {
      if (incomplete.length > 0) {
        ctx.log(`the npm registry does not serve every package of Strapi ${incomplete.join('; ')}; using ${version}`);
      }
      return version;
    }
    incomplete.push(`${version} (no ${missing}@${version})`);
  }
  throw new StepError(`the npm registry does not serve a complete Strapi ${major} release: ${incomplete.join('; ')}`);
}

/** The first package of the release's lockstep set the registry lacks, or null when it has all. */
async function firstMissing(ctx: StepContext, version: string, roots: string[]): Promise<string | null> {
  const queue = ['create-strapi-app', ...roots];
  const seen = new Set(queue);
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const manifest = await fetchVersionManifest(ctx, name, version);
    if (manifest === null) return name;
    for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
      if (!dependency.startsWith('@strapi/') || range !== version || seen.has(dependency)) continue;
      seen.add(dependency);
      queue.push(dependency);
    }
  }
  return null;
}
