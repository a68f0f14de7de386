import type { StepContext } from '../step.js';
import { AS_ROOT, run, StepError } from './commands.js';
import { readFile } from './remote-files.js';

/** npm's own registry, used when settings.npmRegistry (NPM_REGISTRY) is not set. */
export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/';

/** `--registry=<url>` when settings.npmRegistry is set (NPM_REGISTRY), else npm's own default. */
export function npmRegistryArgs(ctx: StepContext): string[] {
  return ctx.settings.npmRegistry ? [`--registry=${npmRegistryUrl(ctx)}`] : [];
}

/** The registry's base URL (http or https), ending in `/`: settings.npmRegistry or npm's own. */
export function npmRegistryUrl(ctx: StepContext): string {
  const registry = ctx.settings.npmRegistry ?? DEFAULT_NPM_REGISTRY;
  let url: URL;
  try {
    url = new URL(registry);
  } catch {
    throw new StepError(`npm registry ${JSON.stringify(registry)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new StepError(`npm registry ${JSON.stringify(registry)} must be an http(s) URL`);
  }
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/**
 * The environment for npm commands that may compile native modules (node-gyp): `npm_config_nodedir`
 * set to the prefix of the server's Node when that prefix holds the headers of exactly this Node.
 * Without it node-gyp downloads the headers from nodejs.org, which many servers cannot reach (the
 * modules' prebuilt binaries, on github.com, usually fail first for the same reason). The headers
 * come with Node's official binaries (NODE_SOURCE=npm: /usr/local/lib/nodejs/v<version>/include/node)
 * and NodeSource's package (/usr/include/node); Debian's node has them only with libnode-dev. In the
 * environment rather than as an option, the setting reaches node-gyp through npm's install scripts
 * whatever npm version runs them. Empty when there are no matching headers (node-gyp then downloads
 * them as before) and on a dry-run server, which answers nothing.
 */
export async function nativeBuildEnv(ctx: StepContext): Promise<Record<string, string>> {
  // Root's node, as ensure-node found it; execPath is the real path (/proc/self/exe), links resolved.
  const probe = await run(ctx, ['env', 'node', '-p', 'process.execPath + "\\n" + process.version'], AS_ROOT);
  const [execPath = '', version = ''] = probe.stdout.trim().split('\n');
  const prefix = /^(\/[^\0\n]*)\/bin\/[^/]+$/.exec(execPath)?.[1];
  if (probe.code !== 0 || !prefix) return {};
  const header = await readFile(ctx, `${prefix}/include/node/node_version.h`, AS_ROOT);
  if (header === null || headerVersion(header) !== version.replace(/^v/, '')) return {};
  return { npm_config_nodedir: prefix };
}

/** NODE_MAJOR_VERSION.NODE_MINOR_VERSION.NODE_PATCH_VERSION of a node_version.h, as node-gyp reads them. */
export function headerVersion(header: string): string | null {
  const part = (name: string) => new RegExp(`^#define ${name} (\\d+)\\s*$`, 'm').exec(header)?.[1];
  const [major, minor, patch] = [part('NODE_MAJOR_VERSION'), part('NODE_MINOR_VERSION'), part('NODE_PATCH_VERSION')];
  return major && minor && patch ? `${major}.${minor}.${patch}` : null;
}

/**
 * The version of the node-gyp that comes with the server's npm: `npm config get node-gyp` names the
 * node-gyp.js npm's install scripts fall back to (NODE_SOURCE=npm: <prefix>/lib/node_modules/npm/
 * node_modules/node-gyp; Debian's npm: its node-gyp package), and its package.json beside bin/ holds
 * the version. Asked as root in `/`, so no project's .npmrc answers. Null when npm names none or
 * the server answers nothing (a dry run).
 */
export async function npmNodeGypVersion(ctx: StepContext): Promise<string | null> {
  const probe = await run(ctx, ['npm', 'config', 'get', 'node-gyp'], { ...AS_ROOT, cwd: '/' });
  const dir = /^(\/[^\0\n]*)\/bin\/node-gyp\.js$/.exec(probe.stdout.trim())?.[1];
  if (probe.code !== 0 || !dir) return null;
  const manifest = await readFile(ctx, `${dir}/package.json`, AS_ROOT);
  let version: unknown;
  try {
    version = (JSON.parse(manifest ?? '{}') as { version?: unknown }).version;
  } catch {
    return null;
  }
  return typeof version === 'string' && /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version) ? version : null;
}
