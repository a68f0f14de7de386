/** The factory and the per-profile pool the composition root uses. */
import { describe, expect, it } from 'vitest';
import { BitbucketProvider } from '../../src/vcs/bitbucket.js';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import { GitProvider } from '../../src/vcs/git.js';
import { GiteaProvider } from '../../src/vcs/gitea.js';
import { GitHubProvider } from '../../src/vcs/github.js';
import { GitLabProvider } from '../../src/vcs/gitlab.js';
import { VcsError, type VcsProfileConfig } from '../../src/vcs/provider.js';
import { VcsProviderPool } from '../../src/vcs/vcs-provider-pool.js';

const config = (override: Partial<VcsProfileConfig>): VcsProfileConfig => ({
  provider: 'github',
  baseUrl: null,
  token: 't0ken-value',
  repositories: [],
  ...override,
});

describe('createVcsProvider', () => {
  it('builds the provider the profile names', () => {
    expect(createVcsProvider(config({ provider: 'github' }))).toBeInstanceOf(GitHubProvider);
    expect(createVcsProvider(config({ provider: 'gitlab' }))).toBeInstanceOf(GitLabProvider);
    expect(createVcsProvider(config({ provider: 'bitbucket' }))).toBeInstanceOf(BitbucketProvider);
    expect(createVcsProvider(config({ provider: 'gitea' }))).toBeInstanceOf(GiteaProvider);
    expect(
      createVcsProvider(config({ provider: 'git', token: null, repositories: ['https://h.example/a/b.git'] })),
    ).toBeInstanceOf(GitProvider);
  });

  it('refuses a git profile with an unsupported remote, without echoing its password', () => {
    const build = () =>
      createVcsProvider(config({ provider: 'git', token: null, repositories: ['ftp://u:pa55word@h.example/a/b.git'] }));
    expect(build).toThrow(VcsError);
    expect(build).toThrow(/ftp:\/\/\*\*\*@h\.example/);
  });
});

describe('VcsProviderPool', () => {
  it('keeps one provider (and cache) per profile until its settings change', () => {
    const pool = new VcsProviderPool();
    const first = pool.get('p1', config({}));
    expect(pool.get('p1', config({}))).toBe(first);
    expect(pool.get('p2', config({}))).not.toBe(first);
    const rotated = pool.get('p1', config({ token: 'new-t0ken-value' }));
    expect(rotated).not.toBe(first);
    pool.forget('p1');
    expect(pool.get('p1', config({ token: 'new-t0ken-value' }))).not.toBe(rotated);
  });

  it('holds at most maxProfiles providers, dropping the least recently used', () => {
    const pool = new VcsProviderPool({}, { maxProfiles: 2 });
    const a = pool.get('a', config({}));
    const firstB = pool.get('b', config({}));
    expect(pool.get('a', config({}))).toBe(a); // a is now the most recently used
    pool.get('c', config({})); // evicts b
    expect(pool.size).toBe(2);
    expect(pool.get('a', config({}))).toBe(a);
    const b = pool.get('b', config({}));
    expect(b).not.toBe(firstB); // rebuilt: it had been dropped
    expect(pool.get('b', config({}))).toBe(b);
    expect(pool.size).toBe(2);
    // Repeated failed creations (a new id each) cannot grow it.
    for (let i = 0; i < 50; i++) pool.get(`attempt-${i}`, config({ token: `t0ken-${i}` }));
    expect(pool.size).toBe(2);
  });
});
