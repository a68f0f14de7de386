import type { StepContext } from '../step.js';
import { StepError } from './commands.js';

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
