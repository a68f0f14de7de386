/** Which git remotes a profile may list and how they are named (ARCHITECTURE §2: last two path segments, `.git` dropped). */
import { describe, expect, it } from 'vitest';
import { classifyGitFailure, parseLsRemote } from '../../src/vcs/git-ls-remote.js';
import { parseGitRemote } from '../../src/vcs/git-remote.js';
import { redact } from '../../src/vcs/redact.js';

describe('parseGitRemote', () => {
  it.each([
    ['https://git.example.com/acme/api.git', 'acme/api'],
    ['https://deploy:p%40ss@git.example.com/group/sub/acme/api.git/', 'acme/api'],
    ['ssh://git@git.example.com:2222/acme/api.git', 'acme/api'],
    ['git@github.com:acme/api.git', 'acme/api'],
    ['git://127.0.0.1:9418/acme/api', 'acme/api'],
  ])('names %s %s', (url, name) => {
    expect(parseGitRemote(url)?.name).toBe(name);
  });

  it('keeps credentials out of the display form and remembers them for redaction', () => {
    const remote = parseGitRemote('https://deploy:p%40ss-word@git.example.com/acme/api.git');
    expect(remote?.display).toBe('https://git.example.com/acme/api.git');
    expect(remote?.secrets).toEqual(['p%40ss-word', 'p@ss-word']);
    expect(parseGitRemote('deploy:hunter22@host.example:acme/api.git')?.secrets).toEqual(['hunter22']);
  });

  it.each([
    'ext::sh -c touch% /tmp/pwned',
    '--upload-pack=touch /tmp/pwned',
    'ftp://git.example.com/acme/api.git',
    // the control plane's own disk: every tenant's repository mirror, /etc, the data directory
    'file:///srv/git/acme/api.git',
    'file://localhost/srv/git/acme/api.git',
    'ext::ssh -oProxyCommand=touch% /tmp/pwned host acme/api',
    'fd::17/acme/api',
    'https://git.example.com/api.git',
    'https://git.example.com/acme/api.git\n',
    'https:///acme/api.git',
    '',
  ])('refuses %j', (url) => {
    expect(parseGitRemote(url)).toBeNull();
  });
});

describe('git ls-remote output and failures', () => {
  it('reads the default branch from the HEAD symref and every branch with its commit', () => {
    const sha = (c: string) => c.repeat(40);
    const out = `ref: refs/heads/trunk\tHEAD\n${sha('a')}\tHEAD\n${sha('a')}\trefs/heads/trunk\n${sha('b')}\trefs/heads/feature/x\n`;
    expect(parseLsRemote(out)).toEqual({
      head: 'trunk',
      branches: [
        { name: 'trunk', commit: sha('a') },
        { name: 'feature/x', commit: sha('b') },
      ],
    });
    expect(parseLsRemote(`${sha('c')}\tHEAD\n`).head).toBeNull();
  });

  it('classifies git messages and strips credentials from them', () => {
    const remote = parseGitRemote('https://u:topsecret@git.example.com/acme/api.git');
    if (!remote) throw new Error('remote should parse');
    const cases: [string, string][] = [
      ["fatal: Authentication failed for 'https://git.example.com/acme/api.git/'", 'auth_failed'],
      ['git@host: Permission denied (publickey).', 'auth_failed'],
      ["fatal: unable to access 'https://u:topsecret@git.example.com/': Could not resolve host: git.example.com", 'unreachable'],
      ['ssh: connect to host git.example.com port 22: Connection timed out', 'unreachable'],
      ["remote: Repository not found.\nfatal: repository 'https://git.example.com/acme/api.git/' not found", 'not_found'],
      // Refused like a credential: the operator adds the key to known_hosts; retrying cannot help.
      ['Host key verification failed.', 'auth_failed'],
    ];
    for (const [stderr, kind] of cases) {
      const error = classifyGitFailure(stderr, remote);
      expect(error.kind).toBe(kind);
      expect(error.message).not.toContain('topsecret');
    }
    expect(redact('see https://u:topsecret@h/x and topsecret', ['topsecret'])).toBe('see https://***@h/x and ***');
  });
});
