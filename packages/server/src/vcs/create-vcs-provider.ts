/**
 * Builds the provider for a version-control profile. The composition root calls this (or keeps a
 * VcsProviderPool) with the decrypted profile; tests pass their own fetch and clock.
 */
import { BitbucketProvider } from './bitbucket.js';
import { GitProvider } from './git.js';
import { GiteaProvider } from './gitea.js';
import { GitHubProvider } from './github.js';
import { GitLabProvider } from './gitlab.js';
import type { VcsProfileConfig, VcsProvider, VcsProviderOptions } from './provider.js';

export function createVcsProvider(config: VcsProfileConfig, options: VcsProviderOptions = {}): VcsProvider {
  switch (config.provider) {
    case 'github':
      return new GitHubProvider(config, options);
    case 'gitlab':
      return new GitLabProvider(config, options);
    case 'bitbucket':
      return new BitbucketProvider(config, options);
    case 'gitea':
      return new GiteaProvider(config, options);
    case 'git':
      return new GitProvider(config, options);
  }
}
