/**
 * `git` profiles with ssh remotes through the API, against the test sshd of
 * scripts/test-env/setup.sh (127.0.0.1:2222, one client key for every user): real `git ls-remote`
 * over real ssh, as a server operator would configure it.
 *
 * Siteplane runs git with `GIT_SSH_COMMAND='ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes
 * -o PubkeyAuthentication=no -o IdentityAgent=none …'`: no key, agent or ~/.ssh/config of this
 * machine is offered to a tenant's remote (a site's deploy key is, when a site is bound: see
 * test/system/sites/deploy-over-ssh.test.ts). This test puts a `ssh` first on PATH that adds the
 * test key and a known_hosts file (standing in for a remote readable without a key). A second
 * `ssh` with an empty known_hosts plays a server that has never seen the host.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, createProfile, readAllPages } from '../../http/vc-api.js';
import { createGitRepos, GIT_BIG_BRANCHES, type GitFixtureRepo } from '../../standins/vcs/git-repos.js';
import { LOOPBACK_TARGETS, startTestService, type TestService } from '../../support/test-service.js';
import { requireTestSsh, testSsh } from '../support/ssh-server.js';

const originalPath = process.env.PATH ?? '';
let dir: string;
let root: string;
let repos: GitFixtureRepo[];
let trusting: string;
let untrusting: string;
let s: TestService;

/** A directory holding an `ssh` that runs the real one with the test key and `knownHosts`. */
async function sshWrapper(name: string, knownHosts: string): Promise<string> {
  const bin = join(dir, name);
  await rm(bin, { recursive: true, force: true });
  await writeFile(join(dir, `${name}.known_hosts`), knownHosts);
  await mkdir(bin);
  const script = [
    '#!/bin/sh',
    `exec /usr/bin/ssh -i '${testSsh.privateKeyPath}' -o IdentitiesOnly=yes -o PubkeyAuthentication=yes -o GlobalKnownHostsFile=/dev/null \\`,
    `  -o UserKnownHostsFile='${join(dir, `${name}.known_hosts`)}' -o StrictHostKeyChecking=yes "$@"`,
    '',
  ].join('\n');
  await writeFile(join(bin, 'ssh'), script);
  await chmod(join(bin, 'ssh'), 0o755);
  return bin;
}

const url = (relativePath: string, user: string = testSsh.username) =>
  `ssh://${user}@${testSsh.host}:${testSsh.port}${join(root, relativePath)}`;
const big = () => repos[0] as GitFixtureRepo;

beforeAll(async () => {
  requireTestSsh();
  dir = await mkdtemp(join(tmpdir(), 'siteplane-vc-ssh-'));
  root = join(dir, 'srv');
  repos = await createGitRepos(root);
  const hostKey = (await readFile(testSsh.hostPublicKeyPath, 'utf8')).trim().split(/\s+/).slice(0, 2).join(' ');
  trusting = await sshWrapper('trusting', `[${testSsh.host}]:${testSsh.port} ${hostKey}\n`);
  untrusting = await sshWrapper('untrusting', '');
  s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
});
afterAll(async () => {
  process.env.PATH = originalPath;
  await s?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  process.env.PATH = `${trusting}:${originalPath}`;
});

describe('git profiles over ssh (test sshd)', () => {
  it('lists ssh remotes with their default branches and returns all branches of one', async () => {
    const profile = await createProfile(s, { provider: 'git', name: 'ssh', repositories: repos.map((r) => url(r.relativePath)) });
    const listed = (await readAllPages(s, `/api/v1/vc-profiles/${profile.uuid}/repos`)).flatMap((page) => page.data);
    expect(listed.map((r) => [r.name, r.default_branch])).toEqual(
      [...repos].sort((a, b) => (a.name < b.name ? -1 : 1)).map((r) => [r.name, r.head]),
    );
    const detail = (await call(s, 'GET', `/api/v1/vc-profiles/${profile.uuid}/repos/${encodeURIComponent(big().name)}`)).json();
    expect(detail.default_branch).toBe('trunk');
    expect(detail.branches).toHaveLength(GIT_BIG_BRANCHES);
  });

  it('refuses at creation a host whose key the server does not know and a missing repository; takes a remote that wants a key', async () => {
    process.env.PATH = `${untrusting}:${originalPath}`;
    const unknownHost = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'git', name: 'unknown-host', repositories: [url(big().relativePath)] },
    });
    expect(unknownHost.statusCode).toBe(422);
    expect(unknownHost.json().errors).toEqual([
      { field: 'repositories.0', code: 'provider_auth_failed', message: expect.stringContaining('Host key verification failed') },
    ]);

    process.env.PATH = `${trusting}:${originalPath}`;
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: {
        provider: 'git',
        name: 'refused',
        repositories: [url(big().relativePath), url('acme/gone.git'), url('acme/api.git')],
      },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.map(({ field, code }: { field: string; code: string }) => ({ field, code }))).toEqual([
      { field: 'repositories.1', code: 'repository_not_found' },
    ]);

    // A remote that refuses every key this machine has (here: a user the test key does not open)
    // is one that admits sites' deploy keys only: taken, listed without a default branch, and read
    // only with a site's key (which it refuses here: 424 naming the refusal).
    const keyOnly = await createProfile(s, {
      provider: 'git',
      name: 'key-only',
      repositories: [url(big().relativePath, 'no-such-user-here')],
    });
    const listed = (await readAllPages(s, `/api/v1/vc-profiles/${keyOnly.uuid}/repos`)).flatMap((page) => page.data);
    expect(listed).toEqual([expect.objectContaining({ name: big().name, default_branch: null })]);
    const detail = await call(s, 'GET', `/api/v1/vc-profiles/${keyOnly.uuid}/repos/${encodeURIComponent(big().name)}`);
    expect(detail.statusCode).toBe(424);
    expect(detail.json()).toMatchObject({
      code: 'provider_auth_failed',
      detail: expect.stringContaining('Permission denied (publickey)'),
    });
  });
});
