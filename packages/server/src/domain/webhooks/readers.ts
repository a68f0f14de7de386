import { bitbucketReader } from './bitbucket.js';
import { giteaReader } from './gitea.js';
import { githubReader } from './github.js';
import { gitlabReader } from './gitlab.js';
import type { HookProvider, HookReader } from './push-reading.js';

/** The reader of each provider's push hook, by the name in the hook's URL. */
export const HOOK_READERS: Record<HookProvider, HookReader> = {
  github: githubReader,
  gitlab: gitlabReader,
  bitbucket: bitbucketReader,
  gitea: giteaReader,
};

export function hookReader(name: string): HookReader | null {
  return Object.hasOwn(HOOK_READERS, name) ? HOOK_READERS[name as HookProvider] : null;
}
