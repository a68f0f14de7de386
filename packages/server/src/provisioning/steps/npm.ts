import type { StepContext } from '../step.js';
import { StepError } from './commands.js';

/** `--registry=<url>` when settings.npmRegistry is set (NPM_REGISTRY), else npm's own default. */
export function npmRegistryArgs(ctx: StepContext): string[] {
  const registry = ctx.settings.npmRegistry;
  if (!registry) return [];
  let url: URL;
  try {
    url = new URL(registry);
  } catch {
    throw new StepError(`npm registry ${JSON.stringify(registry)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new StepError(`npm registry ${JSON.stringify(registry)} must be an http(s) URL`);
  }
  return [`--registry=${url.href}`];
}
